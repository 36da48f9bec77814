"""The binaries a real backend runs, found or built: the control plane's (controlplane.py,
build-binaries.sh) and the Karpenter-on-Azure controller (controller.py, build-controller.sh), with
a timing's source edits (editrules.py, apply-edits.py) and module substitutes for versions the proxy refuses."""
