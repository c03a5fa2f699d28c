%% Functions and a macro for lg_include_trace.act: their stack trace
%% lines are this file's.

-define(CHECK(X), case X of ok -> ok end).

helper(N) when N > 0 ->
    inner(N + 1) + 1.

inner(N) ->
    N = length([a, b]),
    0.
