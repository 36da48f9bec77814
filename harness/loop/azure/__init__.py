"""The Azure provider's side of the loop: the cloud provider (provider.py: instance types, offerings,
VM + NIC creation through the Azure SDK against fakeazure), the SDK's retry and errors, drift checks,
the unavailable-offerings cache, node images as the provider sees them, and the machine a VM is."""
