"""harness/loop/scheduling/gosort.py against the Go toolchain's own sort.Slice: the same permutation of equal
elements, for lengths around every threshold of pdqsort (12, 50) and inputs that take each of its paths
(sorted, reversed, nearly sorted, many ties, patterns); and that keeps_ties claims a stable result only
where the replay gives one."""
from __future__ import annotations

import random
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.backends.binaries.controlplane import go_binary
from harness.loop.scheduling.gosort import SHORTEST_SHIFTING, _Sorter, keeps_ties, pivot_reads, slice_sort

PROGRAM = """package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

type el struct{ id, v int }

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<24), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		fields := strings.Fields(in.Text())
		xs := make([]el, len(fields))
		for i, s := range fields {
			v, _ := strconv.Atoi(s)
			xs[i] = el{i, v}
		}
		sort.Slice(xs, func(a, b int) bool { return xs[a].v < xs[b].v })
		ids := make([]string, len(xs))
		for i, e := range xs {
			ids[i] = strconv.Itoa(e.id)
		}
		fmt.Fprintln(out, strings.Join(ids, " "))
	}
}
"""


def cases(n_cases: int = 1500) -> list[list[int]]:
    rng = random.Random(11)
    out = []
    for _ in range(n_cases):
        n = rng.choice([1, 5, 12, 13, 14, 20, 33, 49, 50, 51, 64, 100, 300])
        k = rng.choice([1, 2, 3, 5, 10, 1000])
        v = [rng.randrange(k) for _ in range(n)]
        shape = rng.choice(["random", "sorted", "reversed", "nearly", "saw"])
        if shape == "sorted":
            v.sort()
        elif shape == "reversed":
            v.sort(reverse=True)
        elif shape == "nearly":
            v.sort()
            for _ in range(rng.randrange(1, 4)):
                v[rng.randrange(n)] += rng.choice([-1, 1, 2])
        elif shape == "saw":
            v = [i % 7 for i in range(n)]
        out.append(v)
    return out


@pytest.mark.skipif(go_binary() is None, reason="needs the Go toolchain (go on PATH or /usr/local/go; CI builds the controller with it)")
def test_slice_sort_leaves_ties_where_gos_sort_slice_does(tmp_path):
    (tmp_path / "go.mod").write_text("module gosortcheck\n\ngo 1.22\n")
    (tmp_path / "main.go").write_text(PROGRAM)
    subprocess.run([go_binary(), "build", "-o", "sorter", "."], cwd=tmp_path, check=True, capture_output=True)
    inputs = cases()
    got = subprocess.run([str(tmp_path / "sorter")], input="\n".join(" ".join(map(str, c)) for c in inputs) + "\n",
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(got) == len(inputs)
    for values, go_order in zip(inputs, got):
        xs = list(enumerate(values))
        slice_sort(xs, lambda a, b: a[1] < b[1])
        assert " ".join(str(i) for i, _ in xs) == go_order, values


def test_up_to_twelve_elements_ties_keep_their_order():
    xs = [(i, v) for i, v in enumerate([2, 1, 2, 1, 0, 2, 1, 0, 0, 1, 2, 0])]
    slice_sort(xs, lambda a, b: a[1] < b[1])
    assert xs == sorted(xs, key=lambda e: e[1])            # Python's sort is stable


# -- keeps_ties: the shortcut a caller may take instead of the replay ---------------------------------
def _by_value(a, b):
    return a[1] < b[1]


@st.composite
def one_out_of_place(draw):
    """A sorted list of (id, value) with one element changed or appended: (list, its position)."""
    n = draw(st.sampled_from([1, 2, 5, 12, 13, 14, 30, 49, 50, 51, 52, 64, 99, 100, 101, 200, 301]))
    top = draw(st.sampled_from([1, 2, 3, 5, 20, 1000]))
    values = sorted(draw(st.lists(st.integers(0, top), min_size=n, max_size=n)))
    if draw(st.booleans()):
        moved = n
        values.append(draw(st.integers(0, top)))
    else:
        moved = draw(st.integers(0, n - 1))
        values[moved] = draw(st.sampled_from([values[moved] + 1, values[moved] - 1, draw(st.integers(0, top))]))
    return list(enumerate(values)), moved


@settings(max_examples=800, deadline=None, derandomize=True)
@given(one_out_of_place())
def test_keeps_ties_only_where_the_replay_is_a_stable_sort(case):
    xs, moved = case
    replayed = list(xs)
    slice_sort(replayed, _by_value)
    if keeps_ties(xs, _by_value, moved):
        assert replayed == sorted(xs, key=lambda e: e[1])          # Python's sort is stable


@settings(max_examples=500, deadline=None, derandomize=True)
@given(one_out_of_place())
def test_keeps_ties_holds_for_long_lists_unless_the_moved_element_is_a_pivot_read(case):
    """Not vacuous: from 50 elements only choosePivot's reads can need the replay."""
    xs, moved = case
    if len(xs) >= SHORTEST_SHIFTING and moved not in pivot_reads(len(xs)):
        assert keeps_ties(xs, _by_value, moved)


def test_pivot_reads_are_choose_pivots_reads():
    reads = []

    class Spy(list):
        def __getitem__(self, i):
            reads.append(i)
            return list.__getitem__(self, i)

    for n in (8, 13, 49, 50, 51, 100, 1001):
        reads.clear()
        _Sorter(Spy(range(n)), lambda a, b: a < b).choose_pivot(0, n)
        assert set(reads) == pivot_reads(n), n
