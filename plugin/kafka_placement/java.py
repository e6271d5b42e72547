"""Java semantics we must reproduce bit for bit: ``int`` arithmetic, ``String`` order and hash, and
the iteration order of ``java.util.HashMap``.

One home for them, so every algorithm that claims Java equality orders, hashes and wraps the same way:

* ``int``: 32-bit two's complement; ``(int)`` narrowing keeps the low 32 bits;
* ``String.compareTo`` compares UTF-16 code units, Python's ``<`` compares code points. They differ
  once a string holds a character above U+FFFF: its surrogate pair (U+D800..U+DFFF) sorts *below*
  U+E000..U+FFFF in Java and above them in Python. The UTF-16-BE bytes compare exactly like Java;
* ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units, wrapped to ``int``;
* ``HashMap`` iterates bucket by bucket (``hash ^ (hash >>> 16)`` masked by the table size), keys
  of one bucket in insertion order — until a bucket holds more than 8 keys in a table of at least
  64 buckets: Java then turns it into a red-black tree, whose iteration order is different (see
  :func:`java_hashmap_order`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1
#: Kafka ``Utils.toPositive``: ``n & POSITIVE_MASK`` (not ``abs``)
POSITIVE_MASK = 0x7FFFFFFF

#: HashMap constants (java.util.HashMap): default capacity, load factor 3/4, treeify thresholds.
_DEFAULT_CAPACITY = 16
_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64
_UNTREEIFY_THRESHOLD = 6


# ---- int ---------------------------------------------------------------------------------------------
def to_int32(value: int) -> int:
    """Java ``(int)`` narrowing of an integer: keep the low 32 bits, two's complement."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def is_int32(value: object) -> bool:
    """True for a Python ``int`` (not ``bool``) within Java's ``int`` range."""
    return isinstance(value, int) and not isinstance(value, bool) and INT_MIN <= value <= INT_MAX


def java_mod(a: int, n: int) -> int:
    """Java ``a % n`` for ints (the result takes the sign of ``a``: truncation toward zero)."""
    r = abs(a) % abs(n)
    return -r if a < 0 else r


# ---- String ------------------------------------------------------------------------------------------
def java_string_key(text: str) -> bytes:
    """Sort key ordering strings exactly like Java's ``String.compareTo`` (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def _all_bmp(strings: Sequence[str]) -> bool:
    if "".join(strings).isascii():  # the usual case in one C pass, not a Python step per string
        return True
    return all(s.isascii() or max(s) <= "\uffff" for s in strings)


def java_sorted(strings: Iterable[str]) -> list[str]:
    """``strings`` sorted as ``Collections.sort`` sorts Java strings."""
    items = list(strings)
    if _all_bmp(items):  # no surrogate pairs: code point order is code unit order, and faster
        return sorted(items)
    return sorted(items, key=java_string_key)


def java_sorted_by(items: Iterable[T], key: Callable[[T], str]) -> list[T]:
    """``items`` sorted by the Java order of ``key(item)`` (stable)."""
    listed = list(items)
    keys = [key(i) for i in listed]
    if _all_bmp(keys):
        return sorted(listed, key=key)
    return sorted(listed, key=lambda i: java_string_key(key(i)))


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` as Java's signed ``int``."""
    return to_int32(java_string_hash_unsigned(text))


def java_string_hash_unsigned(text: str) -> int:
    """``String.hashCode()`` as its unsigned 32-bit pattern."""
    h = 0
    if text.isascii():
        for ch in text.encode("ascii"):
            h = (31 * h + ch) & 0xFFFFFFFF
        return h
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


# ---- HashMap -----------------------------------------------------------------------------------------
def hashmap_spread(hash_code: int) -> int:
    """``HashMap.hash``: the key's ``hashCode`` (unsigned pattern) xor its upper half shifted down."""
    h = hash_code & 0xFFFFFFFF
    return h ^ (h >> 16)


def java_hashmap_capacity(size: int) -> int:
    """Table size of a default ``new HashMap<>()`` after ``size`` puts of distinct, non-colliding keys."""
    capacity = _DEFAULT_CAPACITY
    while size > capacity * 3 // 4:
        capacity *= 2
    return capacity


def java_hashmap_order(
    keys: Sequence[str | None],
    arrival: Sequence[int] | None = None,
    *,
    tree_order: Callable[[int], object] | None = None,
) -> list[int]:
    """Indices of ``keys`` (distinct) in the order a default ``java.util.HashMap`` iterates them.

    ``keys`` are put in the order of ``arrival`` (``arrival[i]`` = when key ``i`` was put; default the
    order of ``keys``); ``None`` hashes as 0 (``Optional.empty()``, ``Objects.hashCode(null)``).
    The table starts at 16 buckets and doubles when the size exceeds 3/4 of it, or when a bucket
    reaches 9 keys while the table is below 64 buckets (``treeifyBin`` resizes instead); a resize
    keeps the relative order inside each bucket. A bucket reaching 9 keys in a table of 64 or more
    becomes a red-black tree (``treeify``): its keys still iterate along their ``next`` links, but
    the tree's root moves to the front (``moveRootToFront``) and later keys are linked right after
    their tree parent (``putTreeVal``). Tree nodes compare by spread hash, then ``compareTo``; for
    keys that are not ``Comparable`` (``Optional``) Java falls back to identity hash codes, which no
    one can reproduce — ``tree_order(index)`` then supplies that order (default: ``compareTo``).
    """
    table = _filled_table(keys, arrival, tree_order)
    result: list[int] = []
    for b in sorted(table.buckets):
        result.extend(table.buckets[b])
    return result


def java_hashmap_trees(keys: Sequence[str | None], arrival: Sequence[int] | None = None) -> list[list[int]]:
    """Indices of the keys in each bucket that the HashMap of :func:`java_hashmap_order` treeified
    (empty when none: then the order depends on hash codes and insertion order alone)."""
    table = _filled_table(keys, arrival, None)
    return [table.buckets[b] for b in sorted(table.trees)]


def _filled_table(
    keys: Sequence[str | None], arrival: Sequence[int] | None, tree_order: Callable[[int], object] | None
) -> _Table:
    n = len(keys)
    order = list(range(n)) if arrival is None else sorted(range(n), key=lambda i: arrival[i])
    hashes = [hashmap_spread(0 if k is None else java_string_hash_unsigned(k)) for k in keys]
    tie = tree_order if tree_order is not None else (lambda i: _string_tree_key(keys[i]))

    def compare(i: int) -> object:
        return (to_int32(hashes[i]), tie(i))

    table = _Table(_DEFAULT_CAPACITY, hashes, compare)
    for size, i in enumerate(order, start=1):
        table.put(i)
        if size > table.capacity * 3 // 4:
            table.resize()
    return table


def _string_tree_key(key: str | None) -> bytes:
    return b"" if key is None else java_string_key(key)


class _Table:
    """The bucket lists of a HashMap (each in ``next``-link order) and the trees of treeified ones."""

    def __init__(self, capacity: int, hashes: list[int], compare: Callable[[int], object]) -> None:
        self.capacity = capacity
        self.hashes = hashes
        self.compare = compare
        self.buckets: dict[int, list[int]] = {}
        self.trees: dict[int, _RedBlack] = {}

    def put(self, i: int) -> None:
        b = self.hashes[i] & (self.capacity - 1)
        bucket = self.buckets.setdefault(b, [])
        tree = self.trees.get(b)
        if tree is not None:  # putTreeVal: linked right after its tree parent
            parent = tree.insert(i, self.compare(i))
            bucket.insert(bucket.index(parent) + 1 if parent is not None else len(bucket), i)
            _move_to_front(bucket, tree.root_key())
            return
        bucket.append(i)
        if len(bucket) > _TREEIFY_THRESHOLD:  # binCount >= TREEIFY_THRESHOLD - 1
            if self.capacity < _MIN_TREEIFY_CAPACITY:
                self.resize()
            else:
                self.treeify(b)

    def treeify(self, b: int) -> None:
        bucket = self.buckets[b]
        tree = _RedBlack()
        for i in bucket:
            tree.insert(i, self.compare(i))
        self.trees[b] = tree
        _move_to_front(bucket, tree.root_key())

    def resize(self) -> None:
        """``resize``/``split``: each bucket splits into a low and a high half in its order; a tree
        half of 6 or fewer keys becomes a list again, a larger one is treeified anew unless the other
        half is empty (then the tree stays as it is)."""
        self.capacity *= 2
        old_buckets, old_trees = self.buckets, self.trees
        self.buckets, self.trees = {}, {}
        for b, bucket in old_buckets.items():
            lo = [i for i in bucket if self.hashes[i] & (self.capacity - 1) == b]
            hi = [i for i in bucket if self.hashes[i] & (self.capacity - 1) != b]
            for half, index in ((lo, b), (hi, b + self.capacity // 2)):
                if not half:
                    continue
                self.buckets[index] = half
                tree = old_trees.get(b)
                if tree is None or len(half) <= _UNTREEIFY_THRESHOLD:
                    continue
                if len(half) == len(bucket):
                    self.trees[index] = tree
                else:
                    self.treeify(index)


def _move_to_front(bucket: list[int], root: int) -> None:
    if bucket[0] != root:
        bucket.remove(root)
        bucket.insert(0, root)


class _RedBlack:
    """The red-black insertion of ``HashMap.TreeNode.balanceInsertion`` (CLR's algorithm), enough to
    know which key ends up at the root and which node a new key hangs under."""

    def __init__(self) -> None:
        self.root: _Node | None = None

    def root_key(self) -> int:
        assert self.root is not None
        return self.root.index

    def insert(self, index: int, sort: object) -> int | None:
        """Insert; returns the index of the parent node it was linked under (None for the root)."""
        node = _Node(index, sort)
        if self.root is None:
            node.red = False
            self.root = node
            return None
        p = self.root
        while True:
            go_left = node.sort < p.sort  # type: ignore[operator]
            child = p.left if go_left else p.right
            if child is None:
                break
            p = child
        node.parent = p
        if go_left:
            p.left = node
        else:
            p.right = node
        self._balance(node)
        return p.index

    def _rotate_left(self, p: _Node) -> None:
        r = p.right
        assert r is not None
        p.right = r.left
        if r.left is not None:
            r.left.parent = p
        r.parent = p.parent
        if p.parent is None:
            self.root = r
            r.red = False
        elif p.parent.left is p:
            p.parent.left = r
        else:
            p.parent.right = r
        r.left = p
        p.parent = r

    def _rotate_right(self, p: _Node) -> None:
        lft = p.left
        assert lft is not None
        p.left = lft.right
        if lft.right is not None:
            lft.right.parent = p
        lft.parent = p.parent
        if p.parent is None:
            self.root = lft
            lft.red = False
        elif p.parent.right is p:
            p.parent.right = lft
        else:
            p.parent.left = lft
        lft.right = p
        p.parent = lft

    def _balance(self, x: _Node) -> None:
        x.red = True
        while True:
            xp = x.parent
            if xp is None:
                x.red = False
                self.root = x
                return
            xpp = xp.parent
            if not xp.red or xpp is None:
                return
            if xp is xpp.left:
                uncle = xpp.right
                if uncle is not None and uncle.red:
                    uncle.red = False
                    xp.red = False
                    xpp.red = True
                    x = xpp
                    continue
                if x is xp.right:
                    x = xp
                    self._rotate_left(x)
                    xp = x.parent
                    xpp = xp.parent if xp is not None else None
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        self._rotate_right(xpp)
            else:
                uncle = xpp.left
                if uncle is not None and uncle.red:
                    uncle.red = False
                    xp.red = False
                    xpp.red = True
                    x = xpp
                    continue
                if x is xp.left:
                    x = xp
                    self._rotate_right(x)
                    xp = x.parent
                    xpp = xp.parent if xp is not None else None
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        self._rotate_left(xpp)


class _Node:
    __slots__ = ("index", "left", "parent", "red", "right", "sort")

    def __init__(self, index: int, sort: object) -> None:
        self.index = index
        self.sort = sort
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.parent: _Node | None = None
        self.red = True
