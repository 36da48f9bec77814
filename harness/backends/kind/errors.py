"""Errors of the kind backend's build and start; each message says what failed and how to fix it."""
from __future__ import annotations


class KindBuildError(RuntimeError):
    """The node image (or a piece of it) could not be built."""


class KindStartError(RuntimeError):
    """A node container, kubeadm or a kubelet did not come up; the message carries the log tail."""
