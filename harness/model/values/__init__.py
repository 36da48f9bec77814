"""Values as Kubernetes and Go write them: resource quantities, durations, cron schedules, Kubernetes
versions, and Go's number parsing (the provider reads SKU capabilities with strconv)."""
