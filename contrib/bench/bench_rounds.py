"""Points of interleaved rounds, as contrib/bench's drivers write them (one
JSON object per point, with "point" and "round"): the values of points
measured in the same round, and their medians. This host changes speed
regime within a minute, so only points of one round are compared.
"""
import json
import statistics


class Rounds:
    def __init__(self, jsonl):
        self.rows = [json.loads(l) for l in open(jsonl) if l.startswith('{')]
        self.rounds = sorted({r['round'] for r in self.rows})
        self.by = {(r['round'], r['point']): r for r in self.rows}

    def per_round(self, f):
        """(round, f(get)) for every round where all the points f gets exist;
        get(point) is that round's object of the point."""
        out = []
        for rd in self.rounds:
            try:
                out.append((rd, f(lambda p, rd=rd: self.by[(rd, p)])))
            except (KeyError, ZeroDivisionError, TypeError):
                pass
        return out


def med(vals):
    """Median of per_round's values (nan when there are none)."""
    return statistics.median(v for _, v in vals) if vals else float('nan')
