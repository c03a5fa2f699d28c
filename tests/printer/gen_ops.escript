#!/usr/bin/env escript
%% Generates ops_cases.txt: arithmetic results and term-order comparisons
%% as OTP 25 computes them.
%% Records, one field per line, each a ~w text:
%%   A <op>\n<X>\n<Y or the atom none>\n<{ok,Result} or {error,Reason}>
%%   C <X>\n<Y>\n<{Less, Equal, ExactEqual}>
-mode(compile).

main(_) ->
    rand:seed(exsss, {3, 14, 15}),
    Ints = [0, 1, -1, 7, -7, 3, 64, 255, -256, 1 bsl 59, (1 bsl 60) - 1, 1 bsl 60, -(1 bsl 60),
            -(1 bsl 60) - 1, 1 bsl 63, -(1 bsl 63), 1 bsl 64, (1 bsl 100) + 12345, -(1 bsl 100),
            123456789012345678901234567890],
    Floats = [0.0, -0.0, 1.5, -2.5, 0.1, 1.0e300, -1.0e300, 3.0, 1.0e15],
    Nums = Ints ++ Floats,
    Binary = ['+', '-', '*', '/', 'div', 'rem', 'band', 'bor', 'bxor', 'bsl', 'bsr'],
    Unary = ['-', 'bnot', abs, float, trunc, round],
    Shifts = [0, 1, 3, 59, 60, 64, 100, -1, -3, -64, -200, 100000000000],
    Arith = [{Op, X, Y} || Op <- Binary -- ['bsl', 'bsr'], X <- Nums, Y <- Nums]
        ++ [{Op, X, Y} || Op <- ['bsl', 'bsr'], X <- Ints, Y <- Shifts]
        ++ [{Op, X, Y} || Op <- ['+', 'div', 'band'], X <- [1, atom, [], 1.0], Y <- [foo, 2]]
        ++ [{Op, X, none} || Op <- Unary, X <- Nums ++ [atom]],
    Terms = [term(3) || _ <- lists:seq(1, 400)] ++ Nums ++ [a, b, 'B', [], [a], [a|b], {}, {a}, #{}, #{a => 1},
                                                          #{1 => a}, #{1.0 => a}, <<>>, <<1>>, <<0>>, "abc", "abd"],
    Pairs = [{pick(Terms), pick(Terms)} || _ <- lists:seq(1, 3000)]
        ++ [{X, Y} || X <- Nums, Y <- Nums],
    Path = filename:join(filename:dirname(escript:script_name()), "ops_cases.txt"),
    ok = file:write_file(Path, [[arith(A) || A <- Arith], [compare(P) || P <- Pairs]]).

arith({Op, X, Y}) ->
    Result = try
                 {ok, case Y of
                          none -> unary(Op, X);
                          _ -> erlang:Op(X, Y)
                      end}
             catch error:Reason -> {error, Reason}
             end,
    io_lib:format("A ~w~n~w~n~w~n~w~n", [Op, X, Y, Result]).

unary('-', X) -> -X;
unary('bnot', X) -> bnot X;
unary(abs, X) -> abs(X);
unary(float, X) -> float(X);
unary(trunc, X) -> trunc(X);
unary(round, X) -> round(X).

compare({X, Y}) ->
    io_lib:format("C ~w~n~w~n~w~n", [X, Y, {X < Y, X == Y, X =:= Y}]).

pick(L) -> lists:nth(rand:uniform(length(L)), L).

term(0) -> leaf();
term(D) ->
    case rand:uniform(6) of
        1 -> list_to_tuple([term(D - 1) || _ <- lists:seq(1, rand:uniform(3) - 1)]);
        2 -> [term(D - 1) || _ <- lists:seq(1, rand:uniform(3))];
        3 -> maps:from_list([{leaf(), term(D - 1)} || _ <- lists:seq(1, rand:uniform(3) - 1)]);
        _ -> leaf()
    end.

leaf() ->
    pick([0, 1, 1.0, -1, 2.5, 1 bsl 70, -(1 bsl 70), a, b, 'Z', [], {}, <<>>, <<1>>, <<1, 2>>, "a", #{}]).
