"""The Lean kernel (formalize -> align -> prove -> check).

``faithsieve.lean.interface`` holds the kernel protocol the pipeline receives and the
``UnavailableKernel`` used when no Lean backend is configured. The lean-interact and
remote-server backends arrive with their own issue.
"""
