"""One exception root for everything FaithSieve raises.

"The proof is wrong" is never an exception: it is a ``refuted`` evidence value.
Exceptions mean that input was unusable or a backend broke.
"""

from __future__ import annotations


class FaithSieveError(Exception):
    """Root of all FaithSieve errors. ``code`` is a stable machine-readable name."""

    code = "faithsieve_error"
    status = 500

    def __init__(self, message: str, detail: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class InputError(FaithSieveError):
    """The request or file is malformed."""

    code = "invalid_input"
    status = 422


class InputTooLarge(InputError):
    """The input exceeds a configured size limit."""

    code = "input_too_large"
    status = 413


class ParseError(FaithSieveError):
    """A formula could not be parsed by the bounded grammar (internal; becomes `unknown`)."""

    code = "parse_error"
    status = 422


class EvaluationLimit(FaithSieveError):
    """Evaluating a formula would exceed a size guard (exponent, factorial, digits)."""

    code = "evaluation_limit"
    status = 422


class NotRational(FaithSieveError):
    """The exact rational evaluator cannot represent the value (irrational, opaque function)."""

    code = "not_rational"
    status = 422


class BackendUnavailable(FaithSieveError):
    """An optional backend (Lean toolchain, LLM endpoint) is not available."""

    code = "backend_unavailable"
    status = 503
