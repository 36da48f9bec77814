"""The model of upstream: what Karpenter core, the Azure provider and Kubernetes do, as data and rules,
with no cluster and no loop. values/, upstream/ (releases and core's switches), labels/, kube/, crd/,
azure/ (SKUs -> instance types); here: data.py (where the data files live) and the commands that
derive the data from upstream's source: sync.py, coresync.py, corechanges.py."""
