#!/usr/bin/env escript
%% Prints a file's forms as Erlang's own parser (erl_parse) reads them, in
%% the notation of act's AST printer (vm/syntax/print.rs), so that a test
%% can compare the two trees: same text, same structure, same precedence.
%% Like escript, it skips the file's first line.
%%
%% Usage: escript erl_print.escript FILE...

main(Files) ->
    ok = io:setopts(standard_io, [{encoding, unicode}]),
    lists:foreach(fun(File) ->
        io:format("==> ~ts~n", [File]),
        {ok, Bin} = file:read_file(File),
        Text = unicode:characters_to_list(Bin),
        Rest = drop_first_line(Text),
        {ok, Tokens, _} = erl_scan:string(Rest, {2, 1}),
        [io:put_chars(lists:flatten(form(F))) || F <- forms(Tokens)]
    end, Files).

drop_first_line([$\n | Rest]) -> Rest;
drop_first_line([_ | Rest]) -> drop_first_line(Rest);
drop_first_line([]) -> [].

forms([]) -> [];
forms(Tokens) ->
    {Form, Rest} = split_dot(Tokens, []),
    {ok, Parsed} = erl_parse:parse_form(Form),
    [Parsed | forms(Rest)].

split_dot([{dot, _} = Dot | Rest], Acc) -> {lists:reverse([Dot | Acc]), Rest};
split_dot([T | Rest], Acc) -> split_dot(Rest, [T | Acc]).

form({attribute, _, module, Name}) -> ["-module(", atom(Name), ").\n"];
form({attribute, _, export, Names}) ->
    ["-export([", join([[atom(N), "/", integer_to_list(A)] || {N, A} <- Names], ", "), "]).\n"];
form({attribute, _, Name, _}) -> ["-", atom(Name), "(...).\n"];
form({function, _, Name, Arity, Clauses}) ->
    ["function ", atom(Name), "/", integer_to_list(Arity), "\n",
     [["  ", atom(Name), clause(C), "\n"] || C <- Clauses]].

clause({clause, _, Patterns, Guard, Body}) ->
    ["(", exprs(Patterns), ")", guard(Guard), " -> ", exprs(Body)].

guard([]) -> [];
guard(Alternatives) -> [" when ", join([exprs(Tests) || Tests <- Alternatives], "; ")].

exprs(Es) -> join([expr(E) || E <- Es], ", ").

clauses(Cs) -> [[" (clause ", clause(C), ")"] || C <- Cs].

expr({integer, _, I}) -> integer_to_list(I);
expr({char, _, C}) -> integer_to_list(C);
expr({float, _, F}) -> float_text(F);
expr({atom, _, A}) -> atom(A);
expr({string, _, S}) -> ["\"", [escape(C, $") || C <- S], "\""];
expr({var, _, V}) -> atom_to_list(V);
expr({nil, _}) -> "[]";
expr({cons, _, _, _} = L) -> list(L, []);
expr({tuple, _, Es}) -> ["{", exprs(Es), "}"];
expr({map, _, Fields}) -> map(Fields);
expr({map, _, M, Fields}) -> ["(update ", expr(M), " ", map(Fields), ")"];
expr({bin, _, Elements}) -> ["<<", join([bin_element(E) || E <- Elements], ", "), ">>"];
expr({op, _, Op, A, B}) -> ["(", atom_to_list(Op), " ", expr(A), " ", expr(B), ")"];
expr({op, _, Op, A}) -> ["(", atom_to_list(Op), " ", expr(A), ")"];
expr({match, _, P, E}) -> ["(= ", expr(P), " ", expr(E), ")"];
expr({call, _, {remote, _, M, F}, Args}) -> ["(call ", expr(M), ":", expr(F), [[" ", expr(A)] || A <- Args], ")"];
expr({call, _, {atom, _, F}, Args}) -> ["(call ", atom(F), [[" ", expr(A)] || A <- Args], ")"];
expr({call, _, F, Args}) -> ["(call fun ", expr(F), [[" ", expr(A)] || A <- Args], ")"];
expr({'fun', _, {clauses, Cs}}) -> ["(fun", clauses(Cs), ")"];
expr({named_fun, _, Name, Cs}) -> ["(fun ", atom_to_list(Name), clauses(Cs), ")"];
expr({'fun', _, {function, F, A}}) -> ["(fun ", atom(F), "/", integer_to_list(A), ")"];
expr({'fun', _, {function, M, F, A}}) -> ["(fun ", expr(M), ":", expr(F), "/", expr(A), ")"];
expr({'case', _, E, Cs}) -> ["(case ", expr(E), clauses(Cs), ")"];
expr({'if', _, Cs}) -> ["(if", clauses(Cs), ")"];
expr({'receive', _, Cs}) -> ["(receive", clauses(Cs), ")"];
expr({'receive', _, Cs, T, B}) -> ["(receive", clauses(Cs), " (after ", expr(T), " -> ", exprs(B), "))"];
expr({'try', _, Body, Of, Catches, After}) ->
    ["(try ", exprs(Body),
     case Of of [] -> []; _ -> [" (of", clauses(Of), ")"] end,
     [catch_clause(C) || C <- Catches],
     case After of [] -> []; _ -> [" (after ", exprs(After), ")"] end,
     ")"];
expr({'catch', _, E}) -> ["(catch ", expr(E), ")"];
expr({block, _, B}) -> ["(begin ", exprs(B), ")"];
expr({lc, _, E, Qs}) -> ["(lc ", expr(E), [qualifier(Q) || Q <- Qs], ")"].

qualifier({generate, _, P, E}) -> [" (<- ", expr(P), " ", expr(E), ")"];
qualifier({b_generate, _, P, E}) -> [" (<= ", expr(P), " ", expr(E), ")"];
qualifier(F) -> [" (filter ", expr(F), ")"].

%% erl_parse fills in an omitted class (`throw`) and stack (`_`) with the
%% location of the reason pattern; written ones have their own.
catch_clause({clause, _, [{tuple, _, [Class, Reason, Stack]}], Guard, Body}) ->
    ClassText = case element(2, Class) =:= element(2, Reason) of
                    true -> [];
                    false -> [expr(Class), ":"]
                end,
    StackText = case Stack of
                    {var, Anno, '_'} when Anno =:= element(2, Reason) -> [];
                    _ -> [":", expr(Stack)]
                end,
    [" (catch ", ClassText, expr(Reason), StackText, guard(Guard), " -> ", exprs(Body), ")"].

list({cons, _, H, T}, Acc) -> list(T, [expr(H) | Acc]);
list({nil, _}, Acc) -> ["[", join(lists:reverse(Acc), ", "), "]"];
list(Tail, Acc) -> ["[", join(lists:reverse(Acc), ", "), " | ", expr(Tail), "]"].

map(Fields) -> ["#{", join([field(F) || F <- Fields], ", "), "}"].

field({map_field_assoc, _, K, V}) -> [expr(K), " => ", expr(V)];
field({map_field_exact, _, K, V}) -> [expr(K), " := ", expr(V)].

bin_element({bin_element, _, Value, Size, Types}) ->
    [expr(Value),
     case Size of default -> []; _ -> [":", expr(Size)] end,
     case Types of
         default -> [];
         _ -> ["/", join([bit_type(T) || T <- Types], "-")]
     end].

bit_type({unit, N}) -> ["unit:", integer_to_list(N)];
bit_type(T) -> atom_to_list(T).

%% Floats as Rust's `{:?}` prints them (for the values the tests use).
float_text(F) when F == trunc(F), abs(F) < 1.0e16 -> [integer_to_list(trunc(F)), ".0"];
float_text(F) -> float_to_list(F, [short]).

atom(A) ->
    S = atom_to_list(A),
    Reserved = ['after', 'and', 'andalso', 'band', 'begin', 'bnot', 'bor', 'bsl', 'bsr', 'bxor',
                'case', 'catch', 'div', 'end', 'fun', 'if', 'not', 'of', 'or', 'orelse',
                'receive', 'rem', 'try', 'when', 'xor'],
    case bare(S) andalso not lists:member(A, Reserved) of
        true -> S;
        false -> ["'", [escape(C, $') || C <- S], "'"]
    end.

bare([C | Rest]) when C >= $a, C =< $z ->
    lists:all(fun(X) -> (X >= $a andalso X =< $z) orelse (X >= $A andalso X =< $Z)
                        orelse (X >= $0 andalso X =< $9) orelse X =:= $_ orelse X =:= $@ end, Rest);
bare(_) -> false.

escape($\n, _) -> "\\n";
escape($\t, _) -> "\\t";
escape($\\, _) -> "\\\\";
escape(Q, Q) -> [$\\, Q];
escape(C, _) when C < 32; C =:= 127; C >= 128, C < 160 -> io_lib:format("\\x{~.16B}", [C]);
escape(C, _) -> [C].

join([], _) -> [];
join([X], _) -> [X];
join([X | Xs], Sep) -> [X, Sep | join(Xs, Sep)].
