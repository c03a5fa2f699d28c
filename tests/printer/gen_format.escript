#!/usr/bin/env escript
%% Generates format_cases.txt: io_lib:format calls and what OTP returns.
%% Record format:  F <~w of the format string>\nA <~w of the args>\n
%% then  R <bytes>\n<output>\n  or  E\n  (badarg).
-mode(compile).

main(_) ->
    Floats = [0.1, 0.15, 0.25, 2.5, 1.0e10, 123.456, -0.0, 0.0, 1.0e-10, 0.5, 100.0,
              1.0e100, 99999.5, 0.0001234, -3.75, 9.995, 1.0e15, 123456789.0, 5.0e-324,
              1.7976931348623157e308, 0.05, 0.95, 9.5, 10000.0, 9999.9],
    FloatFmts = ["~e", "~f", "~g", "~.1f", "~.2f", "~.2e", "~.3e", "~.3g", "~.1g", "~.2g", "~10.3f",
                 "~-10.2f", "~12.4e", "~w", "~p", "~.10f", "~.15g", "~3f", "~.0f", "~.1e"],
    Ints = [0, 1, -1, 10, -10, 255, -255, 1 bsl 70, -(1 bsl 70), 123456789],
    IntFmts = ["~b", "~B", "~.16b", "~.16B", "~.2B", "~8.16.0B", "~#", "~.16#", "~.16+",
               "~.36B", "~5b", "~-5b|", "~2b", "~w", "~p", "~8..0w", "~f", "~c", "~s"],
    Terms = [abc, 'Hello', "abc", [1,2,3], {a, "b", <<"c">>}, #{k => [v]}, <<1,2,3>>,
             [[]], "", <<>>, 3.5, [$a | b], 'a b', "tab\there", [1000], [65, 1000]],
    TermFmts = ["~w", "~p", "~s", "~10w", "~-10w|", "~3w", "~10p", "~lp", "~tp", "~ts",
                "~10s|", "~-10s|", "~.2s", "~5.2s|", "~10.2.*s|"],
    Misc = [{"~5c|~5.2c|~-5.2c|~c", [$a, $b, $c, $d]},
            {"~x|~.16X|~.16x", [255, "0x", 255, "0x", -255, "-"]},
            {"~*c|~-*.*c|~.*f", [3, $x, 5, 2, $y, 2, 3.14159]},
            {"~i~w", [ignored, shown]},
            {"~~|~n|~3n|", []},
            {"~w ~w", [one]},
            {"~w", [one, two]},
            {"~q", [x]},
            {"abc~", []},
            {"~W|~P", [[1,2,3,4,5,6], 3, {a, [1,2,3], {b,c,d}}, 3]},
            {"~W ~W ~W", [#{a => 1, b => 2}, 2, <<"abcdef">>, 3, [1,2|3], 2]},
            {"~P ~P ~P", ["hello world", 3, <<"abcdef">>, 3, [a, "xy", <<1,2,3,4>>], 3]},
            {"~s", [[$a, ["bc", <<"d">>], e]]},
            {"~s", [[$a, ["bc", <<"d">>], "e"]]},
            {"~s", [{tuple}]},
            {"~ts", [[1000, 1001]]},
            {"~s", [[1000]]},
            {"~c", [1000]},
            {"~tc", [1000]},
            {"~10.3.xf|", [2.5]},
            {"~-10.3.xf|", [2.5]},
            {"~5s|", [abcdefgh]},
            {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx~p", [[aaaa, bbbb, cccc, dddd, eeee, ffff]]},
            {"\tab\t~p", [lists:seq(1, 40)]},
            {"line\nxxxxxxxxxxxxxx~p", [lists:seq(1, 30)]},
            {"~p~p", [lists:seq(1, 30), lists:seq(1, 30)]},
            {"~40p", [{a, lists:seq(1, 30)}]},
            {"~.f", [1.5]},
            {"~..f", [1.5]},
            {"~b", [1.5]},
            {"~e", [1]},
            {"~.1B", [5]},
            {"~.37B", [5]}],
    Cases = [{F, [X]} || F <- FloatFmts, X <- Floats]
        ++ [{F, [X]} || F <- IntFmts, X <- Ints]
        ++ [{F, [X]} || F <- TermFmts, X <- Terms]
        ++ Misc,
    Path = filename:join(filename:dirname(escript:script_name()), "format_cases.txt"),
    ok = file:write_file(Path, [record(F, A) || {F, A} <- Cases]).

record(F, A) ->
    Head = [utf8(io_lib:format("F ~w~nA ~w~n", [F, A]))],
    case catch io_lib:format(F, A) of
        {'EXIT', _} -> [Head, "E\n"];
        Chars ->
            B = utf8(Chars),
            [Head, "R ", integer_to_list(byte_size(B)), "\n", B, "\n"]
    end.

utf8(Chars) -> unicode:characters_to_binary(Chars).
