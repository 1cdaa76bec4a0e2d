"""``KiminaBackend``: check snippets on a Kimina Lean Server over HTTP.

Request: ``POST {url}/api/check`` with ``{"snippets": [{"id", "code"}], "timeout": s,
"debug": false, "reuse": true}``; the answer is ``{"results": [{"id", "time", "error",
"response"}]}`` where ``response`` is the Lean REPL's own JSON. Server versions differ: the newest
take a single ``{"snippet": ...}`` on ``/api/check`` (a 422 to the list form) and answer one
result; the oldest only have ``POST /verify`` with ``{"codes": [{"custom_id", "proof"}]}``. The
client tries the list form first, falls back on 422 / 404, and remembers what worked.

Classification follows the server's client: a server-side ``error`` containing "timed out" is
``timeout``, any other ``error`` or a REPL ``{"message": ...}`` is ``repl_error``, then error
messages -> ``lean_error``, ``sorries`` -> ``sorry``, else ``valid``. Transport failures are
``repl_error`` (``timeout`` when the answer did not come within the client's limit), never an
exception and never a hang: the server may spend ``timeout`` on the imports and again on the
body, so the client waits ``2 * timeout + 10`` s at most. The server keeps a REPL per import header
(``reuse``), so only the first snippet with a header pays for the import: that one is sent with the
import limit (``faithsieve.lean.local.IMPORT_TIMEOUT_S``) instead, and once the server has answered
it, later snippets with the header get the check's own limit.

The API key comes from the environment variable named by ``lean_server_api_key_env`` and is sent
as ``Authorization: Bearer`` (and ``X-Auth-Token`` for older servers); it never appears in a
detail, a log line or ``repr``.
"""

from __future__ import annotations

import math
import os
import re
import time
import uuid
from typing import TYPE_CHECKING, Any

import httpx
from faithsieve.lean.backend import CheckResult, CheckStatus, LeanUnavailable
from faithsieve.lean.local import IMPORT_TIMEOUT_S, result_from_repl, split_header

from faithsieve.runtime.urls import public_url

if TYPE_CHECKING:
    from faithsieve.core.settings import Settings

BACKEND_NAME = "kimina"
HEALTH_TIMEOUT_S = 5.0
"""Time limit of the health probe in ``available()``."""
CONNECT_TIMEOUT_S = 5.0
CLIENT_MARGIN_S = 10.0
"""Added to twice the check's time limit to give the client's read limit."""
VERSION_RETRY_S = 60.0
"""After a failed version probe, wait this long before probing again."""


def classify_item(item: Any, *, backend: str = BACKEND_NAME, time_ms: float = 0.0) -> CheckResult:
    """Classify one Kimina result (``{"id", "error", "response", "time"}`` or the ``/verify`` form)."""
    if not isinstance(item, dict):
        return CheckResult(status="repl_error", backend=backend, time_ms=time_ms,
                           detail="the Lean server answered something unreadable")
    error = item.get("error")
    if error:
        status: CheckStatus = "timeout" if "timed out" in str(error).lower() else "repl_error"
        return CheckResult(status=status, backend=backend, time_ms=time_ms,
                           detail=f"Lean server: {' '.join(str(error).split())[:300]}")
    response = item.get("response")
    if response is None:
        return CheckResult(status="repl_error", backend=backend, time_ms=time_ms,
                           detail="the Lean server gave neither a response nor an error")
    return result_from_repl(response, backend=backend, time_ms=time_ms)


def _pick(payload: Any, snippet_id: str) -> Any:
    """The result for ``snippet_id`` in any of the answer shapes."""
    items = payload.get("results") if isinstance(payload, dict) and "results" in payload else payload
    if isinstance(items, dict):
        return items
    if isinstance(items, list) and items:
        for it in items:
            if isinstance(it, dict) and snippet_id in (it.get("id"), it.get("custom_id")):
                return it
        return items[0]
    return None


class KiminaBackend:
    """A ``LeanBackend`` over a Kimina Lean Server (see the module docstring)."""

    name = BACKEND_NAME

    def __init__(self, settings: Settings, *, transport: httpx.BaseTransport | None = None) -> None:
        self.settings = settings
        self.url = (settings.lean_server_url or "").rstrip("/")
        self.endpoint = public_url(self.url)
        env_name = settings.lean_server_api_key_env
        self._secret = os.environ.get(env_name, "") if env_name else ""
        headers = {"Authorization": f"Bearer {self._secret}", "X-Auth-Token": self._secret} if self._secret else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, transport=transport,
                                  timeout=httpx.Timeout(settings.lean_timeout_s, connect=CONNECT_TIMEOUT_S)) \
            if self.url else None
        self._variant = "list"  # "list": /api/check snippets; "single": /api/check snippet; "verify": /verify
        self._versions: dict[str, str] | None = None
        self._versions_failed_at = -math.inf
        self._warm: set[str] = set()
        """Import headers the server has elaborated (its REPLs for them are warm)."""

    def __repr__(self) -> str:
        return f"KiminaBackend(url={self.endpoint!r}, api_key={'set' if self._secret else 'unset'})"

    def _scrub(self, text: str) -> str:
        text = text.replace(self.url, self.endpoint) if self.url else text
        return text.replace(self._secret, "***") if self._secret and len(self._secret) >= 4 else text

    # ---- the protocol ----
    def available(self) -> tuple[bool, str]:
        if self._http is None:
            return False, "no Lean server configured: set FAITHSIEVE_LEAN_SERVER_URL (e.g. http://127.0.0.1:12332)"
        try:
            r = self._http.get("/health", timeout=HEALTH_TIMEOUT_S)
        except httpx.HTTPError as exc:
            return False, self._scrub(f"Lean server {self.endpoint} unreachable: {type(exc).__name__}: {exc}")[:300]
        if r.status_code == 200:
            return True, ""
        if r.status_code == 404:  # an older server without /health: one trivial check instead
            res = self.check("#check Nat", timeout_s=HEALTH_TIMEOUT_S)
            if res.status in ("valid", "sorry", "lean_error"):
                return True, ""
            return False, f"Lean server {self.endpoint} does not check snippets: {res.detail}"
        return False, f"Lean server {self.endpoint} health check answered HTTP {r.status_code}"

    def versions(self) -> dict[str, str]:
        """Lean version as the server's REPL reports it (``#eval Lean.versionString``, asked once);
        the server package version when its OpenAPI document says; Mathlib's is not exposed."""
        if self._versions is not None:
            return dict(self._versions)
        unknown = {"lean": "unknown", "mathlib": "unknown"}
        if self._http is None or time.monotonic() - self._versions_failed_at < VERSION_RETRY_S:
            return unknown
        res = self.check("#eval Lean.versionString", timeout_s=min(20.0, self.settings.lean_timeout_s))
        # the digits may not follow a digit: a long run of digits is scanned once, not from each position
        m = next((re.search(r'"?v?(?<!\d)(\d+\.\d+[^"\s]*)"?', msg.text) for msg in res.messages if msg.severity == "info"),
                 None)
        if res.status != "valid" or m is None:
            self._versions_failed_at = time.monotonic()
            return unknown
        found = {"lean": "v" + m.group(1), "mathlib": "unknown"}
        try:
            info = self._http.get("/api/openapi.json", timeout=HEALTH_TIMEOUT_S).json().get("info", {})
            if isinstance(info, dict) and info.get("version"):
                found["server"] = f"kimina {info['version']}"
        except (httpx.HTTPError, ValueError, AttributeError):
            pass
        self._versions = found
        return dict(found)

    def check(self, code: str, timeout_s: float | None = None) -> CheckResult:
        started = time.perf_counter()
        if self._http is None:
            raise LeanUnavailable(self.available()[1])
        timeout = float(timeout_s) if timeout_s and timeout_s > 0 else self.settings.lean_timeout_s
        header = split_header(code)[0]
        if header and header not in self._warm:
            timeout = max(timeout, IMPORT_TIMEOUT_S)  # the server imports the header once, in this check
        sid = uuid.uuid4().hex
        wait = httpx.Timeout(2 * timeout + CLIENT_MARGIN_S, connect=CONNECT_TIMEOUT_S)

        def elapsed() -> float:
            return (time.perf_counter() - started) * 1000.0

        def fail(status: CheckStatus, detail: str) -> CheckResult:
            return CheckResult(status=status, backend=self.name, time_ms=elapsed(),
                               detail=self._scrub(detail)[:400])

        variant = self._variant
        tried: list[str] = []
        while True:
            tried.append(variant)
            path, body = self._request(variant, sid, code, timeout)
            try:
                r = self._http.post(path, json=body, timeout=wait)
            except httpx.TimeoutException as exc:
                if isinstance(exc, httpx.ConnectTimeout):
                    return fail("repl_error", f"cannot reach Lean server {self.endpoint}: connect timed out")
                return fail("timeout", f"no answer from the Lean server within {wait.read:g} s")
            except httpx.HTTPError as exc:
                return fail("repl_error", f"cannot reach Lean server {self.endpoint}: {type(exc).__name__}: {exc}")
            nxt = {"list": {422: "single", 404: "verify"}, "single": {404: "verify"}}.get(variant, {}).get(r.status_code)
            if nxt is not None and nxt not in tried:
                variant = nxt
                continue
            break
        if r.status_code in (401, 403):
            return fail("repl_error", f"the Lean server refused the request (HTTP {r.status_code}); check the key in "
                                      f"${self.settings.lean_server_api_key_env}")
        if r.status_code == 429:
            return fail("repl_error", "the Lean server is busy (HTTP 429: no REPL available)")
        if r.status_code != 200:
            return fail("repl_error", f"the Lean server answered HTTP {r.status_code}: {' '.join(r.text.split())[:200]}")
        try:
            payload = r.json()
        except ValueError:
            return fail("repl_error", f"the Lean server answered non-JSON: {' '.join(r.text.split())[:120]}")
        self._variant = variant
        result = classify_item(_pick(payload, sid), backend=self.name, time_ms=elapsed())
        if header and result.status in ("valid", "sorry", "lean_error"):
            self._warm.add(header)
        return result.model_copy(update={"detail": self._scrub(result.detail)}) if result.detail else result

    def warm(self, header: str) -> CheckResult:
        """Have the server elaborate ``header`` now, under the import limit (the server keeps a REPL per
        header), so that later checks with it get their own limits only."""
        if not header.strip() or header in self._warm:
            return CheckResult(status="valid", backend=self.name, detail="nothing to import" if not header.strip()
                               else "header already imported on the server")
        return self.check(f"{header}\n\n#check Nat", IMPORT_TIMEOUT_S)

    def _request(self, variant: str, sid: str, code: str, timeout: float) -> tuple[str, dict[str, Any]]:
        t = max(1, math.ceil(timeout))
        if variant == "verify":
            return "/verify", {"codes": [{"custom_id": sid, "proof": code}], "timeout": t, "disable_cache": False}
        base: dict[str, Any] = {"timeout": t, "debug": False, "reuse": True}
        if variant == "single":
            return "/api/check", {"snippet": {"id": sid, "code": code}, **base}
        return "/api/check", {"snippets": [{"id": sid, "code": code}], **base}

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
