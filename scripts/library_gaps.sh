#!/bin/sh
# Lists, for each module below, the functions OTP exports (asked of the
# installed `erl`) that act lacks (asked of act itself, through
# code:ensure_loaded and erlang:function_exported). Usage:
#   scripts/library_gaps.sh [path/to/act] [module ...]
ACT=${1:-${CARGO_TARGET_DIR:-target}/release/act}
[ $# -gt 0 ] && shift
MODULES=${*:-"os file ets gen_server proplists maps lists string calendar timer erlang math queue array dict orddict sets ordsets gb_trees gb_sets unicode binary base64 rand io io_lib filename"}
TMP=$(mktemp -d)
LIST=$(echo $MODULES | sed 's/ /,/g')
erl -noshell -eval "
  Ms = [$LIST],
  L = [{M, F, A} || M <- Ms, {F, A} <- M:module_info(exports),
                    F =/= module_info, hd(atom_to_list(F)) =/= \$\$],
  io:format(\"~p.~n\", [L]), halt()." > "$TMP/otp.terms"
cat > "$TMP/gaps.act" <<'ACT'
#!/usr/bin/env escript
main([File]) ->
    {ok, [L]} = file:consult(File),
    [code:ensure_loaded(M) || M <- lists:usort([M || {M, _, _} <- L])],
    Missing = [{M, F, A} || {M, F, A} <- L, not erlang:function_exported(M, F, A)],
    lists:foreach(fun(M) ->
        case [io_lib:format("~p/~p", [F, A]) || {M1, F, A} <- Missing, M1 =:= M] of
            [] -> ok;
            Fs -> io:format("~p: ~s~n", [M, lists:join(" ", Fs)])
        end
    end, lists:usort([M || {M, _, _} <- Missing])).
ACT
"$ACT" "$TMP/gaps.act" "$TMP/otp.terms"
rm -rf "$TMP"
