%% stdlib/include/eunit.hrl for act: what a module that includes
%% "eunit/include/eunit.hrl" gets. TEST is defined (unless NOTEST is),
%% the ?assert... macros come from assert.hrl, and each ?_assert... is
%% its ?assert... made a test object, {Line, fun () -> ... end}. The
%% -compile line asks for OTP's eunit_autoexport, which act does itself
%% (syntax/eunit_autoexport.rs): the module's ..._test/0 and
%% ..._test_/0 functions and a test/0 running them are exported.
-ifndef(EUNIT_HRL).
-define(EUNIT_HRL, true).
-ifdef(NOTEST).
-undef(TEST).
-else.
-ifndef(TEST).
-define(TEST, true).
-endif.
-endif.
-ifndef(NOTEST).
-compile({parse_transform, eunit_autoexport}).
-endif.
-include_lib("stdlib/include/assert.hrl").

-define(LET(Var, Expr, Body), begin ((fun (Var) -> (Body) end)(Expr)) end).
-define(IF(Cond, Then, Else), (case (Cond) of true -> (Then); false -> (Else) end)).

-define(_test(Expr), {?LINE, fun () -> (Expr) end}).
-define(_assert(BoolExpr), ?_test(?assert(BoolExpr))).
-define(_assert(BoolExpr, Comment), ?_test(?assert(BoolExpr, Comment))).
-define(_assertNot(BoolExpr), ?_test(?assertNot(BoolExpr))).
-define(_assertNot(BoolExpr, Comment), ?_test(?assertNot(BoolExpr, Comment))).
-define(_assertMatch(Guard, Expr), ?_test(?assertMatch(Guard, Expr))).
-define(_assertMatch(Guard, Expr, Comment), ?_test(?assertMatch(Guard, Expr, Comment))).
-define(_assertNotMatch(Guard, Expr), ?_test(?assertNotMatch(Guard, Expr))).
-define(_assertNotMatch(Guard, Expr, Comment), ?_test(?assertNotMatch(Guard, Expr, Comment))).
-define(_assertEqual(Expect, Expr), ?_test(?assertEqual(Expect, Expr))).
-define(_assertEqual(Expect, Expr, Comment), ?_test(?assertEqual(Expect, Expr, Comment))).
-define(_assertNotEqual(Unexpected, Expr), ?_test(?assertNotEqual(Unexpected, Expr))).
-define(_assertNotEqual(Unexpected, Expr, Comment), ?_test(?assertNotEqual(Unexpected, Expr, Comment))).
-define(_assertException(Class, Term, Expr), ?_test(?assertException(Class, Term, Expr))).
-define(_assertException(Class, Term, Expr, Comment), ?_test(?assertException(Class, Term, Expr, Comment))).
-define(_assertError(Term, Expr), ?_assertException(error, Term, Expr)).
-define(_assertError(Term, Expr, Comment), ?_assertException(error, Term, Expr, Comment)).
-define(_assertExit(Term, Expr), ?_assertException(exit, Term, Expr)).
-define(_assertExit(Term, Expr, Comment), ?_assertException(exit, Term, Expr, Comment)).
-define(_assertThrow(Term, Expr), ?_assertException(throw, Term, Expr)).
-define(_assertThrow(Term, Expr, Comment), ?_assertException(throw, Term, Expr, Comment)).
-define(_assertNotException(Class, Term, Expr), ?_test(?assertNotException(Class, Term, Expr))).
-define(_assertNotException(Class, Term, Expr, Comment), ?_test(?assertNotException(Class, Term, Expr, Comment))).

%% The debug macros print to the user device, as OTP's do.
-define(debugMsg(S), begin io:fwrite(user, <<"~ts:~w:~w: ~ts\n">>, [?FILE, ?LINE, self(), S]), ok end).
-define(debugHere, (?debugMsg("<-"))).
-define(debugFmt(S, As), (?debugMsg(io_lib:format((S), (As))))).
-define(debugVal(E, D), ((fun (X__V) -> ?debugFmt(<<"~ts = ~tP">>, [(??E), X__V, D]), X__V end)(E))).
-define(debugVal(E), ?debugVal(E, 15)).
-define(debugTime(S, E), ((fun () -> {X__T0, _} = statistics(wall_clock), X__V = (E), {X__T1, _} = statistics(wall_clock), ?debugFmt(<<"~ts: ~.3f s">>, [(S), (X__T1 - X__T0) / 1000]), X__V end)())).
-endif.
