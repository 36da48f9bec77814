"""Microsoft.Network: network interfaces and their operations."""
