"""Host ports: a pod that asks for a host port can share a node with no other pod asking for the same
port (protocol and, unless either side is unspecified, IP).

Karpenter core sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/hostportusage.go (HostPort.Matches,
HostPortUsage.Conflicts, GetHostPorts), used by scheduling/existingnode.go ExistingNode.CanAdd,
scheduling/nodeclaim.go NodeClaim.CanAdd and filterInstanceTypesByRequirements (the DaemonSet pods
of a daemon overhead group hold their ports); kube-scheduler's NodePorts filter (kubernetes v1.36.3
pkg/scheduler/framework/plugins/nodeports/node_ports.go Fits) answers the same question at binding.
"""
from __future__ import annotations

import ipaddress
from typing import Iterable, NamedTuple

# kubernetes v1.36.3 pkg/scheduler/framework/plugins/nodeports/node_ports.go ErrReason
NODE_PORTS_REASON = "node(s) didn't have free ports for the requested pod ports"
# core v1.14.0 pkg/scheduling/hostportusage.go Conflicts
CONFLICT = "pod hostport conflicts with existing hostport configuration"


class HostPort(NamedTuple):
    ip: str
    port: int
    protocol: str

    def matches(self, other: "HostPort") -> bool:
        """HostPort.Matches: same protocol and port, and the same IP unless either is 0.0.0.0/::."""
        if self.protocol != other.protocol or self.port != other.port:
            return False
        return self.ip == other.ip or _unspecified(self.ip) or _unspecified(other.ip)


def _unspecified(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_unspecified
    except ValueError:
        return False


def host_ports(spec: dict) -> list[HostPort]:
    """GetHostPorts: every container port with a hostPort (hostIP defaults to 0.0.0.0; the API
    server defaults an empty protocol to TCP)."""
    out = []
    for c in spec.get("containers") or []:
        for p in (c or {}).get("ports") or []:
            port = int(p.get("hostPort") or 0)
            if port:
                out.append(HostPort(str(p.get("hostIP") or "0.0.0.0"), port, str(p.get("protocol") or "TCP")))
    return out


def conflict(wanted: Iterable[HostPort], used: Iterable[HostPort]) -> HostPort | None:
    """The first wanted port that one of `used` already holds, else None."""
    used = list(used)
    for w in wanted:
        for u in used:
            if w.matches(u):
                return w
    return None
