"""Check the fake against the Azure SDK for Go that the Karpenter controller uses (not a test:
it needs Go and, on a cold module cache, the Go module proxy).

    python -m fakeazure.tools.go_sdk_check

Builds ``fakeazure/tools/goclient`` (binary cached in
``<harness cache>/fakeazure-goclient/<source hash>/``), serves a fresh fake over TLS,
writes the fake ``az`` into a temporary directory first on ``PATH``, trusts only the fake's CA
(``SSL_CERT_FILE``) and runs the client; prints its lines and exits with its status.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from fakeazure import FakeAzureServer, azshim

SRC = pathlib.Path(__file__).resolve().parent / "goclient"
# the harness cache ($HARNESS_CACHE, else $XDG_CACHE_HOME/karpenter-harness: harness/backends/binaries/controlplane.py
# cache_dir, which fakeazure does not import)
CACHE = pathlib.Path(os.environ.get("HARNESS_CACHE")
                     or pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache")
                     / "karpenter-harness") / "fakeazure-goclient"


def build() -> pathlib.Path:
    digest = hashlib.sha256(b"".join((SRC / f).read_bytes() for f in ("main.go", "go.mod", "go.sum"))).hexdigest()
    out = CACHE / digest[:16] / "goclient"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS="-mod=readonly")
        subprocess.run(["go", "build", "-o", str(out), "."], cwd=SRC, env=env, check=True)
    return out


def main() -> int:
    if shutil.which("go") is None:
        print("go_sdk_check: no `go` on PATH", file=sys.stderr)
        return 2
    binary = build()
    with tempfile.TemporaryDirectory(prefix="fakeazure-gocheck-") as tmp:
        azshim.write(pathlib.Path(tmp) / "bin")
        with FakeAzureServer(tls=True) as srv:
            env = dict(os.environ, PATH=f"{tmp}/bin{os.pathsep}{os.environ.get('PATH', '')}",
                       SSL_CERT_FILE=srv.ca_path)
            return subprocess.run([str(binary), srv.endpoint], env=env, timeout=600).returncode


if __name__ == "__main__":
    raise SystemExit(main())
