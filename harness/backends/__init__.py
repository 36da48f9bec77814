"""Cluster backends behind one interface (base.py): embedded (in-process), local (real binaries),
container, kind/; binaries/ finds or builds the control plane's and the controller's binaries."""
