"""The language-model layer: an OpenAI-compatible client, a response cache, prompt files,
and structured asking (model output parsed into pydantic models, or ``Unparsed``).

Pure stages never import the client implementation; they receive an ``LLMClient``.
"""
