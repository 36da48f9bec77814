"""The Azure side: ResourceSkus and VM size names read as the provider reads them (synthesized when no
catalog holds one), the instance types and offerings built from them (static part, cache, overhead,
the AKSNodeClass inputs, the profile's switches), image families and node image labels."""
