"""bench/real_releases.py picks, per release, the smoke set in an API the release's own CRDs serve."""
from types import SimpleNamespace

from tests.scriptload import load_script



def _bench():
    return load_script("bench/real_releases.py", "real_releases")


def _crd(kind: str, group: str, *versions: str) -> str:
    vs = "".join(f"    - name: {v}\n      served: true\n" for v in versions)
    return (f"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  group: {group}\n"
            f"  names: {{kind: {kind}}}\n  versions:\n{vs}")


def test_each_release_runs_the_set_its_crds_serve(tmp_path):
    bench = _bench()
    sets = bench.smoke_sets()
    assert [n for n, _ in sets] == ["current", "v1-v1alpha2", "v1beta1"]
    assert all(len(scs) == 3 for _, scs in sets)

    def picked(nodepool: tuple, nodeclass: tuple) -> str:
        for f in tmp_path.glob("*.yaml"):
            f.unlink()
        (tmp_path / "np.yaml").write_text(_crd("NodePool", "karpenter.sh", *nodepool))
        (tmp_path / "nc.yaml").write_text(_crd("AKSNodeClass", "karpenter.azure.com", *nodeclass))
        return bench.pick_set(sets, bench.served_by(SimpleNamespace(crds_dir=tmp_path)))[0]
    assert picked(("v1beta1",), ("v1alpha2",)) == "v1beta1"                 # provider v0.5.5, v0.6.3
    assert picked(("v1", "v1beta1"), ("v1alpha2",)) == "v1-v1alpha2"       # v0.7.5
    assert picked(("v1",), ("v1alpha2", "v1beta1")) == "current"            # v1.4 on
    assert bench.pick_set(sets, {})[0] == "current"                         # no CRD directory: the harness's own
    assert bench.pick_set(sets, {"NodePool": {"karpenter.sh/v1alpha5"}}) is None
