"""The one identity memo (interop/memo.py): hits by identity only, owners kept alive,
forgets at its limit, and shared by threads without losing or tearing an entry."""

from __future__ import annotations

import threading

from interop.memo import IdentityMemo


def test_a_value_is_made_once_per_owner_and_never_for_an_equal_one() -> None:
    memo: IdentityMemo[str] = IdentityMemo()
    made: list[object] = []

    def make(owner: object) -> str:
        made.append(owner)
        return f"text {len(made)}"

    first, equal = [1, 2], [1, 2]
    assert memo.made((first,), lambda: make(first)) == "text 1"
    assert memo.made((first,), lambda: make(first)) == "text 1"
    assert memo.made((equal,), lambda: make(equal)) == "text 2"  # equal, not the same
    assert memo.made((first,), lambda: make(first), "variant") == "text 3"
    assert made == [first, equal, first]


def test_the_owners_stay_alive_so_their_ids_stay_theirs() -> None:
    memo: IdentityMemo[int] = IdentityMemo()
    memo.made(([0],), lambda: 1)  # the only reference to the list is the memo's
    ((owners, _),) = memo._found.values()
    assert owners == ([0],)


def test_the_memo_forgets_everything_at_its_limit() -> None:
    memo: IdentityMemo[int] = IdentityMemo(limit=3)
    owners = [[n] for n in range(4)]
    for n, owner in enumerate(owners[:3]):
        memo.made((owner,), lambda n=n: n)
    assert len(memo) == 3
    memo.made((owners[3],), lambda: 3)
    assert len(memo) == 1 and memo.values() == [3]


def test_threads_share_it_and_every_hit_is_its_owners_value() -> None:
    memo: IdentityMemo[int] = IdentityMemo(limit=50)
    owners = [[n] for n in range(200)]
    wrong: list[tuple[int, int]] = []
    start = threading.Barrier(4)

    def work() -> None:
        start.wait()
        for _ in range(20):
            for n, owner in enumerate(owners):
                got = memo.made((owner,), lambda n=n: n)
                if got != n:
                    wrong.append((n, got))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
    assert len(memo) <= 50
