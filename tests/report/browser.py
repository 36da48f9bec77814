"""A headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: the
browser reads commands on fd 3 and writes replies and events on fd 4, each a JSON message ended by a NUL
byte; https://chromedevtools.github.io/devtools-protocol/). No port is opened, nothing is downloaded:
the browser is Debian's `chromium` package (.ci/run installs it).

`Browser.open(url)` loads a page and returns its rendered DOM and what the page reported: console
messages of level error or warning, uncaught exceptions, and the browser's own log entries of level
error (a resource that failed to load, a blocked request).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

TIMEOUT = 60.0           # seconds a page may take to load (a guard, never a measurement)


def chromium() -> str | None:
    """Debian's chromium; Ubuntu's name for it; Google Chrome (GitHub's Ubuntu runners have it)."""
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


@dataclass
class Page:
    url: str
    dom: str
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)     # every URL the page asked for


class Browser:
    def __init__(self, binary: str):
        self.profile = tempfile.mkdtemp(prefix="harness-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def fds() -> None:              # the child's fd 3 and 4, as the protocol wants them
            r, w = os.dup(to_browser_r), os.dup(from_browser_w)     # neither is overwritten by the other's dup2
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--disable-component-update", "--mute-audio",
             f"--user-data-dir={self.profile}", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4),    # kept open after preexec_fn (close_fds runs last)
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._id = 0
        self._events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    # -- the protocol -------------------------------------------------------------------------
    def _send(self, msg: dict) -> None:
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError(f"chromium exited ({self.proc.poll()})")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, session: bool = False, **params) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self._send(msg)
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result") or {}
            self._events.append(reply)

    def _wait(self, method: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not any(e.get("method") == method for e in self._events):
            self._events.append(self._read(deadline))

    # -- pages --------------------------------------------------------------------------------
    def open(self, url: str) -> Page:
        self._events = []
        self.call("Page.navigate", session=True, url=url)
        self._wait("Page.loadEventFired")
        dom = self.call("Runtime.evaluate", session=True, expression="document.documentElement.outerHTML",
                        returnByValue=True)["result"]["value"]
        page = Page(url, dom)
        for e in self._events:
            p = e.get("params") or {}
            if e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                page.errors.append(f"console.{p['type']}: " + " ".join(str(a.get("value", a.get("description", "")))
                                                                      for a in p.get("args") or []))
            elif e.get("method") == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails") or {}
                page.errors.append(f"exception: {(d.get('exception') or {}).get('description') or d.get('text')}")
            elif e.get("method") == "Log.entryAdded" and (p.get("entry") or {}).get("level") == "error":
                page.errors.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif e.get("method") == "Network.requestWillBeSent":
                page.requests.append((p.get("request") or {}).get("url", ""))
        return page

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
