#!/usr/bin/env bash
# Run inside a warm kind worker just before its kubelet starts: show the kubelet's cAdvisor the VM's
# machine instead of the Docker host's, the way lxcfs shows a container its own limits (bind mounts
# over the files cAdvisor reads; github.com/google/cadvisor v0.56.2 machine/info.go Info):
#   - memory: /proc/meminfo with MemTotal set to the VM's memory (GetMachineMemoryCapacity);
#   - CPUs: /sys/devices/system/cpu with cpu0..cpuN-1 (GetTopology -> sysinfo.GetNodesInfo, which falls
#     back to the CPU topology when /sys/devices/system/node has no node dirs).
# N must not exceed the host's CPUs: the kubelet writes cpuset.cpus=0-(N-1) on its kubepods cgroup
# (k8s.io/kubernetes v1.36.3 pkg/kubelet/cm/node_container_manager_linux.go getCgroupConfig) and the
# kernel refuses CPUs it does not have ("numerical result out of range").
#
#   machine-view.sh <cpus> <memory KiB>
set -euo pipefail
N=$1
MEM_KB=$2
V=/run/harness-machine
mkdir -p "$V/cpu" "$V/node"
for i in $(seq 0 $((N - 1))); do
  mkdir -p "$V/cpu/cpu$i/topology"
  echo "$i" > "$V/cpu/cpu$i/topology/core_id"
  echo 0 > "$V/cpu/cpu$i/topology/physical_package_id"
done
for f in online possible present; do echo "0-$((N - 1))" > "$V/cpu/$f"; done
awk -v m="$MEM_KB" '/^MemTotal:/ {printf "MemTotal:       %d kB\n", m; next} {print}' /proc/meminfo > "$V/meminfo"
mount --bind "$V/cpu" /sys/devices/system/cpu
mount --bind "$V/node" /sys/devices/system/node
mount --bind "$V/meminfo" /proc/meminfo
