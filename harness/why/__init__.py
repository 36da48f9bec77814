"""Why a run went as it did: every decision about one object (`--why NAME`, objects.py), the release's
switches and facts that decided (`--deciding`), and a size's path through each release's provider
(`harness explain`)."""
