"""Microsoft.Compute: resource SKUs, usages, virtual machines, operations."""
