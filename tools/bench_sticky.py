"""Kafka's large sticky-assignor tests as a benchmark
(`testLargeAssignmentAndGroupWithUniformSubscription`, `...WithNonEqualSubscription`,
`testAssignmentAndGroupWithNonEqualSubscriptionNotTimeout` of `AbstractStickyAssignorTest`).

    python -m tools.bench_sticky [--case a|b|c|all]
                                [--assignor sticky|cooperative-sticky|balanced|all] [--replay]

Each case times, per assignor, what Kafka's JUnit test does: a fresh assignment, then a
rebalance in which every member but the first reports what it owns (the first stays fresh).
Only assignor calls are timed, not building the inputs. Kafka's limits (its JUnit timeouts) and
Java's times on a 2-vCPU machine are printed alongside.

* a: 500 topics x 2,000 partitions (1M), 2,000 members all subscribed (constrained path).
* b: the same, but the last member subscribes only to the first topic (general path).
* c: 100 topics x 200 partitions, 500 members; members i with i % 4 == 0 subscribe to the first
  half of the topics, the others to the second half (general path).

`--replay` also times `CooperativeStickyAssignor.rebalance` (every cooperative round until the
assignment is stable) on the second phase; that is not part of Kafka's test.

A benchmark, not a test: `make bench` runs it; it needs no Spark.
"""

from __future__ import annotations

import argparse
import gc
import time

from assignors.analysis.bounds import best_balance
from assignors.model import Assignment, GroupSpec, Member, TopicMetadata
from assignors.strategies.balanced import BalancedAssignor
from assignors.strategies.sticky.assignor import CooperativeStickyAssignor, StickyAssignor

# case -> (limit in s, Java sticky s, Java cooperative s), Java's times measured on
# this machine class (JUnit wall time, fresh plan + rebalance).
LIMITS = {"a": (30.0, 8.7, 6.1), "b": (90.0, 20.5, 29.3), "c": (90.0, 11.2, 11.5)}


def _name(prefix: str, i: int, count: int) -> str:
    """Kafka's test names: prefix + i zero-padded to the width of `count`."""
    return f"{prefix}{i:0{len(str(count))}d}"


def build(case: str) -> GroupSpec:
    if case in ("a", "b"):
        n_topics, n_parts, n_members = 500, 2_000, 2_000
    else:
        n_topics, n_parts, n_members = 100, 200, 500
    names = [_name("t", i, n_topics) for i in range(n_topics)]
    meta = {t: TopicMetadata(t, n_parts) for t in names}
    every = frozenset(names)
    subs: list[frozenset[str]] = []
    for i in range(n_members):
        if case == "a":
            subs.append(every)
        elif case == "b":
            subs.append(frozenset(names[:1]) if i == n_members - 1 else every)
        else:
            half = n_topics // 2
            subs.append(frozenset(names[:half] if i % 4 == 0 else names[half:]))
    members = tuple(Member(_name("c", i, n_members), s) for i, s in enumerate(subs))
    return GroupSpec("bench", members, meta)


def second(spec: GroupSpec, first: Assignment) -> GroupSpec:
    """Every member but the first reports what it got (generation absent, as in Kafka)."""
    members = tuple(
        m if i == 0 else Member(m.member_id, m.topics, owned=tuple(first[m.member_id]))
        for i, m in enumerate(spec.members)
    )
    return GroupSpec(spec.group_id, members, spec.topics)


def check(spec: GroupSpec, out: Assignment) -> str:
    sizes = [len(v) for v in out.values()]
    total = sum(spec.partition_count(t) for t in spec.subscribed_topics())
    assigned = sum(sizes)
    return f"assigned {assigned}/{total}, sizes {min(sizes)}..{max(sizes)}"


def run(case: str, which: list[str], replay: bool) -> None:
    t0 = time.perf_counter()
    spec = build(case)
    print(f"case {case}: built input in {time.perf_counter() - t0:.1f} s", flush=True)
    limit, java_sticky, java_coop = LIMITS[case]
    for name in which:
        assignor = StickyAssignor() if name == "sticky" else CooperativeStickyAssignor()
        java = java_sticky if name == "sticky" else java_coop
        gc.collect()
        t1 = time.perf_counter()
        first = assignor.assign(spec)
        fresh = time.perf_counter() - t1
        spec2 = second(spec, first)
        gc.collect()
        t2 = time.perf_counter()
        out = assignor.assign(spec2)
        again = time.perf_counter() - t2
        total = fresh + again
        verdict = "OK" if total <= limit else "OVER"
        print(
            f"  {name:<18} fresh {fresh:6.2f} s  rebalance {again:6.2f} s  total {total:6.2f} s"
            f"  (limit {limit:.0f} s: {verdict}; Java {java} s)  [{check(spec2, out)}]",
            flush=True,
        )
        if replay and isinstance(assignor, CooperativeStickyAssignor):
            gc.collect()
            t3 = time.perf_counter()
            result = assignor.rebalance(spec2)
            print(
                f"  {'':<18} replay of all cooperative rounds {time.perf_counter() - t3:6.2f} s"
                f" ({result.rounds} rounds)",
                flush=True,
            )
        del first, out, spec2


def run_balanced(case: str) -> None:
    """`balanced` (one round) plus the best-balance bound, fresh then rebalance."""
    spec = build(case)
    limit = LIMITS[case][0]
    assignor = BalancedAssignor()
    times: list[float] = []
    bound_times: list[float] = []
    first: Assignment = {}
    out: Assignment = {}
    for phase in (0, 1):
        current = spec if phase == 0 else second(spec, first)
        gc.collect()
        t1 = time.perf_counter()
        out = assignor.assign(current)
        times.append(time.perf_counter() - t1)
        t2 = time.perf_counter()
        best = best_balance(current, max(len(v) for v in out.values())).best_max
        bound_times.append(time.perf_counter() - t2)
        if phase == 0:
            first = out
    total = sum(times) + sum(bound_times)
    verdict = "OK" if total <= limit else "OVER"
    print(
        f"  {'balanced':<18} fresh {times[0]:6.2f} s  rebalance {times[1]:6.2f} s"
        f"  bound {bound_times[0]:.3f} + {bound_times[1]:.3f} s  total {total:6.2f} s"
        f"  (limit {limit:.0f} s: {verdict})  [{check(spec, out)}, best max {best}]",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=["a", "b", "c", "all"], default="all")
    parser.add_argument(
        "--assignor", choices=["sticky", "cooperative-sticky", "balanced", "all"], default="all"
    )
    parser.add_argument("--replay", action="store_true", help="also time cooperative rebalance")
    args = parser.parse_args()
    cases = ["a", "b", "c"] if args.case == "all" else [args.case]
    which = ["sticky", "cooperative-sticky"] if args.assignor == "all" else [args.assignor]
    for case in cases:
        if args.assignor == "balanced":
            run_balanced(case)
        else:
            run(case, which, args.replay)


if __name__ == "__main__":
    main()
