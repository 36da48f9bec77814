"""Go's sort.Slice, exactly: the order it leaves equal elements in.

Core sorts its planned NodeClaims by pod count with sort.Slice before placing each pod
(sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/scheduler.go Scheduler.add), and
which of two claims with the same count is tried first decides where the pod goes. sort.Slice is not
stable: it is pattern-defeating quicksort (Go src/sort/slice.go Slice, zsortfunc.go pdqsort_func: an
insertion sort up to 12 elements, which keeps ties in order, then median pivots, partitions, a seeded
xorshift to break patterns and a heapsort fallback), unchanged since Go 1.19. This is that algorithm,
step for step, over a Python list with a `less` on elements; tests/loop/scheduling/test_gosort.py checks it against
the Go toolchain's own sort.Slice. `keeps_ties` says, from at most 12 reads, when a list that is sorted
but for one element leaves sort.Slice as a stable sort would, so a caller can skip the replay.
"""
from __future__ import annotations

from typing import Callable, Sequence, TypeVar

T = TypeVar("T")

MAX_INSERTION = 12        # pdqsort_func: insertion sort at or below this length
SHORTEST_NINTHER = 50     # choosePivot_func: Tukey's ninther from this length
MAX_SWAPS = 12            # choosePivot_func: 4 * 3 order2 swaps mean a decreasing run
MAX_STEPS = 5             # partialInsertionSort_func
SHORTEST_SHIFTING = 50    # partialInsertionSort_func: no shifting below this length
MASK64 = (1 << 64) - 1


def slice_sort(xs: list[T], less: Callable[[T, T], bool]) -> None:
    """Sort `xs` in place as Go's sort.Slice(xs, less) does."""
    n = len(xs)
    _Sorter(xs, less).pdqsort(0, n, n.bit_length())


def pivot_reads(n: int) -> frozenset[int]:
    """The positions choosePivot_func compares when sorting a whole slice of length n >= 8."""
    marks = [n // 4 * 1, n // 4 * 2, n // 4 * 3]
    if n >= SHORTEST_NINTHER:
        return frozenset(m + d for m in marks for d in (-1, 0, 1))
    return frozenset(marks)


def keeps_ties(xs: Sequence[T], less: Callable[[T, T], bool], moved: int) -> bool:
    """Whether sort.Slice(xs) orders xs as a stable sort does, for an xs that would be sorted without
    its element at `moved` (one element changed its key or was appended); False means "replay".

    Why it holds (each case is one pdqsort_func path): up to 12 elements it is an insertion sort, which
    is stable. Otherwise the first round has balanced = partitioned = true and no pattern breaking.
    Before choosePivot's first swap every comparison is of two read positions in order, and the only
    pairs out of order involve `moved`: if `moved` is not read, no swap happens, the hint is
    "increasing" and partialInsertionSort runs. It finds the one descent (next to `moved`), swaps it,
    and its shifts carry the element left past strictly greater ones or right past strictly smaller
    ones, to where a stable sort puts it; its next scan meets no descent and it reports sorted. A
    sorted xs is left as it is (no swap, no descent). Under 50 elements partialInsertionSort gives up at
    the first descent, so only a sorted xs is known. Reads xs[moved - 1 .. moved + 1] and, when
    `moved` is a pivot read, the pivot reads."""
    n = len(xs)
    if n <= MAX_INSERTION:
        return True
    if (moved == 0 or not less(xs[moved], xs[moved - 1])) and (moved == n - 1 or not less(xs[moved + 1], xs[moved])):
        return True                               # already sorted
    if n < SHORTEST_SHIFTING:
        return False
    if moved not in pivot_reads(n):
        return True
    return _Sorter(xs, less).choose_pivot(0, n)[1] == "increasing"


class _Sorter:
    def __init__(self, xs: list, less: Callable):
        self.xs, self.less_of = xs, less

    def less(self, i: int, j: int) -> bool:
        return self.less_of(self.xs[i], self.xs[j])

    def swap(self, i: int, j: int) -> None:
        xs = self.xs
        xs[i], xs[j] = xs[j], xs[i]

    def insertion(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap(self, a: int, b: int) -> None:
        hi = b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, a)
        for i in range(hi - 1, -1, -1):
            self.swap(a, a + i)
            self.sift_down(0, i, a)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        balanced = partitioned = True
        while True:
            length = b - a
            if length <= MAX_INSERTION:
                self.insertion(a, b)
                return
            if limit == 0:
                self.heap(a, b)
                return
            if not balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == "decreasing":
                self.reverse(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = "increasing"
            if balanced and partitioned and hint == "increasing" and self.partial_insertion(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(MAX_STEPS):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < SHORTEST_SHIFTING:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:                       # the smaller one leftwards (Go's loop runs down to 1)
                j = i - 1
                while j >= 1 and self.less(j, j - 1):
                    self.swap(j, j - 1)
                    j -= 1
            if b - i >= 2:                       # the greater one rightwards
                j = i + 1
                while j < b and self.less(j, j - 1):
                    self.swap(j, j - 1)
                    j += 1
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length
        modulus = 1 << length.bit_length()
        for idx in range(a + (length // 4) * 2 - 1, a + (length // 4) * 2 + 2):
            state ^= (state << 13) & MASK64
            state ^= state >> 7
            state ^= (state << 17) & MASK64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, str]:
        n = b - a
        swaps = [0]
        i, j, k = a + n // 4 * 1, a + n // 4 * 2, a + n // 4 * 3
        if n >= 8:
            if n >= SHORTEST_NINTHER:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, "increasing"
        if swaps[0] == MAX_SWAPS:
            return j, "decreasing"
        return j, "unknown"

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1
