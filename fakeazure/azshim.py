"""A fake Azure CLI (``az``) for credential chains that shell out to it.

azidentity's ``AzureCLICredential`` (github.com/Azure/azure-sdk-for-go/sdk/azidentity v1.14.0,
azure_cli_credential.go ``GetToken``/``createAccessToken``) runs
``/bin/sh -c "az account get-access-token -o json --resource <resource> [--tenant T]"`` and
reads ``accessToken`` plus ``expires_on`` (Unix seconds; ``expiresOn`` local time is only
the fallback when ``expires_on`` is 0).  The Python ``AzureCliCredential`` reads the same
fields.  :func:`write` puts a POSIX shell script named ``az`` into a directory that answers
exactly that command with a fake token valid for an hour; anything else exits 1 with a
message on stderr.  Nothing is contacted: the token is a constant the fake never checks.
"""
from __future__ import annotations

import os
import pathlib
import shlex

from .arm import WELL_KNOWN_SUBSCRIPTION

FAKE_TOKEN = "fakeazure-token"
WELL_KNOWN_TENANT = "00000000-0000-0000-0000-000000000001"

_SCRIPT = """#!/bin/sh
# fakeazure az shim: answers `az account get-access-token ...` with a fake token (fakeazure/azshim.py).
if [ "$1" != "account" ] || [ "$2" != "get-access-token" ]; then
  echo "fakeazure az shim: only 'az account get-access-token' is served, not: az $*" >&2
  exit 1
fi
exp=$(( $(date +%s) + 3600 ))
printf '{"accessToken":"%s","expires_on":%s,"subscription":"%s","tenant":"%s","tokenType":"Bearer"}\\n' \\
  {token} "$exp" {subscription} {tenant}
"""


def write(directory: str | os.PathLike, subscription: str = WELL_KNOWN_SUBSCRIPTION,
          tenant: str = WELL_KNOWN_TENANT, token: str = FAKE_TOKEN) -> str:
    """Write the executable ``DIRECTORY/az``; returns its path."""
    d = pathlib.Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / "az"
    path.write_text(_SCRIPT.replace("{token}", shlex.quote(token))
                    .replace("{subscription}", shlex.quote(subscription))
                    .replace("{tenant}", shlex.quote(tenant)))
    path.chmod(0o755)
    return str(path)
