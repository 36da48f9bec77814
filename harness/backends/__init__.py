"""Cluster backends behind one interface: embedded (in-process), local (real binaries), container."""
