#!/usr/bin/env escript
%% Generates the printer corpus: random terms, each printed by OTP with
%% ~w and with ~p at several columns and line lengths.
%% Usage: escript gen.escript [Count [Seed]]   (writes corpus.txt beside it)
%% Record format (all lengths in bytes of the UTF-8 text):
%%   T <~w of the term>\n
%%   P <column> <line length> <bytes>\n<output>\n     (io_lib:format "~Lp" after Column chars)
%%   W <bytes>\n<output>\n                            (~w)
%%   E <term_to_binary of the term, as a list of bytes>\n
-mode(compile).

main(Args) ->
    {Count, Seed} = case Args of
                        [N] -> {list_to_integer(N), 1234};
                        [N, S] -> {list_to_integer(N), list_to_integer(S)};
                        _ -> {1600, 1234}
                    end,
    rand:seed(exsss, {17, 42, Seed}),
    Records = [emit(term(rand:uniform(3))) || _ <- lists:seq(1, Count)],
    Path = filename:join(filename:dirname(escript:script_name()), "corpus.txt"),
    ok = file:write_file(Path, Records).

emit(T) ->
    [utf8(["T ", io_lib:format("~w", [T]), "\n"]),
     [begin
         Prefix = lists:duplicate(Col, $x),
         Fmt = Prefix ++ "~" ++ integer_to_list(Ll) ++ "p",
         S = lists:nthtail(Col, lists:flatten(io_lib:format(Fmt, [T]))),
         B = unicode:characters_to_binary(S),
         ["P ", integer_to_list(Col), " ", integer_to_list(Ll), " ",
          integer_to_list(byte_size(B)), "\n", B, "\n"]
      end || {Col, Ll} <- [{0, 80}, {0, 40}, {10, 60}, {35, 80}, {3, 25}]],
     begin
         W = utf8(io_lib:format("~w", [T])),
         ["W ", integer_to_list(byte_size(W)), "\n", W, "\n"]
     end,
     ["E ", io_lib:format("~w", [binary_to_list(term_to_binary(T))]), "\n"]].

utf8(Chars) -> unicode:characters_to_binary(Chars).

pick(L) -> lists:nth(rand:uniform(length(L)), L).

term(0) -> leaf();
term(D) ->
    case rand:uniform(12) of
        1 -> leaf();
        2 -> leaf();
        3 -> list_to_tuple([term(D - 1) || _ <- lists:seq(1, rand:uniform(6) - 1)]);
        4 -> list_to_tuple([pick(atoms()) | [term(D - 1) || _ <- lists:seq(1, rand:uniform(5))]]);
        5 -> [term(D - 1) || _ <- lists:seq(1, rand:uniform(8))];
        6 -> [int() || _ <- lists:seq(1, rand:uniform(25))];
        7 -> maps:from_list([{key(), term(D - 1)} || _ <- lists:seq(1, rand:uniform(7) - 1)]);
        8 -> [term(D - 1) || _ <- lists:seq(1, rand:uniform(4))] ++ leaf();
        9 -> string();
        10 -> [string() || _ <- lists:seq(1, rand:uniform(6))];
        11 -> {pick(atoms()), [term(D - 1) || _ <- lists:seq(1, rand:uniform(5))]};
        12 -> [{pick(atoms()), term(D - 1)} || _ <- lists:seq(1, rand:uniform(6))]
    end.

key() ->
    case rand:uniform(4) of
        1 -> int();
        2 -> float();
        _ -> pick(atoms())
    end.

leaf() ->
    case rand:uniform(9) of
        1 -> int();
        2 -> float();
        3 -> pick(atoms());
        4 -> string();
        5 -> bin();
        6 -> [];
        7 -> {};
        8 -> rand:uniform(1 bsl 200) - (1 bsl 199);
        9 -> pick([#{}, <<>>, [[]], {{}}, -1, 0, 1.0, -0.5])
    end.

int() ->
    case rand:uniform(3) of
        1 -> rand:uniform(100);
        2 -> rand:uniform(100000) - 50000;
        3 -> rand:uniform(1 bsl 62) - (1 bsl 61)
    end.

float() ->
    M = rand:uniform() * 10 - 5,
    E = rand:uniform(61) - 31,
    case rand:uniform(4) of
        1 -> float(rand:uniform(1000));
        2 -> M;
        _ -> M * math:pow(10, E)
    end.

atoms() ->
    [ok, error, foo, a, 'Foo', 'hello world', 'if', undefined, true, false, 'a-b',
     long_atom_name_for_wrapping, x1, 'B@c', node@host, '', 'it\'s', '\n', query, 'end',
     'caf\x{e9}', '\x{c9}t\x{e9}', 'a\x{3bb}', 'X', '_x', 'a.b', 'hello_World9'].

string() ->
    Chars = " abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,.;!?\"'\\\n\t{}[]",
    %% Now and then a character outside ASCII: latin1 letters print in
    %% strings, the C1 controls and DEL make the list a list.
    Rare = [$\e, $\v, $\b, $\f, $\r, 127, 128, 159, 160, 233, 255, 7],
    [case rand:uniform(40) of 1 -> pick(Rare); _ -> pick(Chars) end || _ <- lists:seq(1, rand:uniform(30))].

bin() ->
    case rand:uniform(3) of
        1 -> list_to_binary(string());
        2 -> list_to_binary([rand:uniform(256) - 1 || _ <- lists:seq(1, rand:uniform(40))]);
        3 -> list_to_binary([rand:uniform(10) || _ <- lists:seq(1, rand:uniform(5))])
    end.
