#!/usr/bin/env python3
"""Generates tests/cases/bits_roundtrip_corpus.act: random bit-syntax
round trips (build a bitstring from random segments, print it, match it
back with the same segments, print what the match bound). Run once; the
case runner checks the output against escript like every other case.

    python3 tests/generators/bits_roundtrip.py > tests/cases/bits_roundtrip_corpus.act
"""
import random

rng = random.Random(20261203)
CASES = 240


def integer_segment():
    size = rng.choice([1, 3, 4, 7, 8, 8, 8, 12, 16, 16, 24, 31, 32, 33, 48, 63, 64, 65, 72, 100])
    signed = rng.choice(["", "-signed", "-unsigned"])
    endian = rng.choice(["", "-big", "-little", "-native"])
    unit = ""
    if size % 4 == 0 and rng.random() < 0.2:
        unit = "-unit:4"
        size //= 4
    bits = size * (4 if unit else 1)
    # Values in range, past the range (truncated) and negative.
    value = rng.choice([
        rng.randrange(0, 1 << bits),
        rng.randrange(-(1 << (bits - 1)), 1 << (bits - 1)) if bits > 1 else 0,
        rng.randrange(0, 1 << (bits + 8)),
        rng.choice([0, 1, -1, 255, 256]),
    ])
    spec = f"integer{signed}{endian}{unit}"
    return (str(value), f"{size}", spec, bits)


def float_segment():
    # Now and then a size no float has: construction fails (badarg).
    size = rng.choice([16, 32, 64, 16, 32, 64, 16, 32, 64, 24])
    endian = rng.choice(["", "-big", "-little"])
    value = rng.choice(["1.5", "-2.25", "0.0", "1024.0", "0.125", "3.0", "-0.5", "100.0"])
    # (a variable, so erlc does not warn at compile time)
    return (value, "F24" if size == 24 else str(size), f"float{endian}", size)


def bytes_literal(n):
    return "<<" + ",".join(str(rng.randrange(256)) for _ in range(n)) + ">>"


def binary_segment():
    n = rng.randrange(0, 6)
    return (bytes_literal(n), str(n), "binary", n * 8)


def bits_segment():
    n = rng.randrange(0, 20)
    value = f"<<{rng.randrange(0, 1 << n) if n else 0}:{n}>>"
    return (value, str(n), "bits", n)


def utf_segment():
    cp = rng.choice([0x41, 0x7f, 0x80, 0xe9, 0x7ff, 0x800, 0x20ac, 0xfffd, 0x10000, 0x1f600, 0x10ffff])
    kind = rng.choice(["utf8", "utf16", "utf16-little", "utf32", "utf32-little"])
    size = {"utf8": 8 * len(chr(cp).encode("utf-8")),
            "utf16": 16 * (len(chr(cp).encode("utf-16-be")) // 2),
            "utf32": 32}[kind.split("-")[0]]
    return (str(cp), None, kind, size)


MAKERS = [integer_segment, integer_segment, float_segment, binary_segment, bits_segment, utf_segment]


def case(i):
    segments = [rng.choice(MAKERS)() for _ in range(rng.randrange(1, 6))]
    build = []
    match = []
    names = []
    for k, (value, size, spec, _bits) in enumerate(segments):
        var = f"V{k}"
        names.append(var)
        sized = f":{size}" if size is not None else ""
        build.append(f"(id({value})){sized}/{spec}")
        last = k == len(segments) - 1
        if spec in ("binary", "bits") and last and rng.random() < 0.5:
            match.append(f"{var}/bits")
        elif size is not None and size.isdigit() and spec.startswith("integer") and rng.random() < 0.15:
            # A size one off: the rest no longer lines up (or does not fit).
            match.append(f"{var}:{int(size) + 1}/{spec}")
        else:
            match.append(f"{var}{sized}/{spec}")
    # Sometimes the size of the last segment comes from a field in front.
    lines = [f"case{i}() ->"]
    if any(seg[1] == "F24" for seg in segments):
        lines.append("    F24 = id(24),")
    lines.append(f"    B = <<{', '.join(build)}>>,")
    if rng.random() < 0.2:
        lines.append(f"    Pre = <<(bit_size(B)):16, B/bits>>,")
        lines.append(f"    R = case Pre of <<N:16, All:N/bits>> -> {{N, All =:= B}}; _ -> nomatch end,")
    else:
        lines.append("    R = nop,")
    lines.append(f"    M = case B of <<{', '.join(match)}>> -> {{{', '.join(names)}}}; _ -> nomatch end,")
    lines.append("    io:format(\"~w ~w ~w~n\", [B, M, R])")
    return "\n".join(lines)


def main():
    print("#!/usr/bin/env escript")
    print("-mode(compile).")
    print("%% Random bit-syntax round trips, generated once by")
    print("%% tests/generators/bits_roundtrip.py: build from random segments, print")
    print("%% the bitstring, match it back with the same segments, print the match.")
    print()
    print("main(_) ->")
    for i in range(CASES):
        print(f"    run(fun case{i}/0),")
    print("    ok.")
    print()
    print("run(F) ->")
    print("    try F() catch C:R -> io:format(\"~w~n\", [{C, R}]) end.")
    print()
    print("id(X) -> X.")
    for i in range(CASES):
        print()
        print(case(i) + ".")


main()
