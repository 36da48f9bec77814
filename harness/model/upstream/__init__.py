"""Each upstream release as data: the profiles (a core + provider pairing's facts), the release index
and which release answers for a version, the provider's SKU tables, and core's behaviour switches
(corespec.py, corebehaviour.py, factchange.py); releasesync.py, derivation.py and gosource.py derive
them from each release's own source for `python -m harness.model.sync`."""
