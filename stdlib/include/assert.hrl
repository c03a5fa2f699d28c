%% stdlib/include/assert.hrl for act: the ?assert... macros. Each runs its
%% check in a fun of its own and, when the check fails, raises the error
%% term OTP documents for it ({assert, Info}, {assertEqual, Info}, ...),
%% Info a list of {module, M}, {line, L}, [{comment, C},] {expression,
%% Text} and what was expected and found. With NOASSERT defined (or
%% NODEBUG without DEBUG), and without ASSERT, every macro is just ok.
-ifndef(ASSERT_HRL).
-define(ASSERT_HRL, true).
-ifdef(NODEBUG).
-ifndef(DEBUG).
-ifndef(NOASSERT).
-define(NOASSERT, true).
-endif.
-endif.
-endif.
-ifdef(ASSERT).
-undef(NOASSERT).
-endif.
-ifdef(NOASSERT).
-define(assert(BoolExpr), ok).
-else.
-define(assert(BoolExpr),
        begin ((fun () ->
            X__T = is_process_alive(self()),
            case (BoolExpr) of
                X__T -> ok;
                X__V -> erlang:error({assert, [{module, ?MODULE}, {line, ?LINE}, {expression, (??BoolExpr)}, {expected, true}, case not X__T of X__V -> {value, false}; _ -> {not_boolean, X__V} end]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assert(BoolExpr, Comment), ok).
-else.
-define(assert(BoolExpr, Comment),
        begin ((fun () ->
            X__T = is_process_alive(self()),
            case (BoolExpr) of
                X__T -> ok;
                X__V -> erlang:error({assert, [{module, ?MODULE}, {line, ?LINE}, {comment, (Comment)}, {expression, (??BoolExpr)}, {expected, true}, case not X__T of X__V -> {value, false}; _ -> {not_boolean, X__V} end]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertNot(BoolExpr), ok).
-else.
-define(assertNot(BoolExpr),
        begin ((fun () ->
            X__F = not is_process_alive(self()),
            case (BoolExpr) of
                X__F -> ok;
                X__V -> erlang:error({assert, [{module, ?MODULE}, {line, ?LINE}, {expression, (??BoolExpr)}, {expected, false}, case not X__F of X__V -> {value, true}; _ -> {not_boolean, X__V} end]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertNot(BoolExpr, Comment), ok).
-else.
-define(assertNot(BoolExpr, Comment),
        begin ((fun () ->
            X__F = not is_process_alive(self()),
            case (BoolExpr) of
                X__F -> ok;
                X__V -> erlang:error({assert, [{module, ?MODULE}, {line, ?LINE}, {comment, (Comment)}, {expression, (??BoolExpr)}, {expected, false}, case not X__F of X__V -> {value, true}; _ -> {not_boolean, X__V} end]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertMatch(Guard, Expr), ok).
-else.
-define(assertMatch(Guard, Expr),
        begin ((fun () ->
            case (Expr) of
                Guard -> ok;
                X__V -> erlang:error({assertMatch, [{module, ?MODULE}, {line, ?LINE}, {expression, (??Expr)}, {pattern, (??Guard)}, {value, X__V}]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertMatch(Guard, Expr, Comment), ok).
-else.
-define(assertMatch(Guard, Expr, Comment),
        begin ((fun () ->
            case (Expr) of
                Guard -> ok;
                X__V -> erlang:error({assertMatch, [{module, ?MODULE}, {line, ?LINE}, {comment, (Comment)}, {expression, (??Expr)}, {pattern, (??Guard)}, {value, X__V}]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertNotMatch(Guard, Expr), ok).
-else.
-define(assertNotMatch(Guard, Expr),
        begin ((fun () ->
            X__V = (Expr),
            case X__V of
                Guard -> erlang:error({assertNotMatch, [{module, ?MODULE}, {line, ?LINE}, {expression, (??Expr)}, {pattern, (??Guard)}, {value, X__V}]});
                _ -> ok
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertNotMatch(Guard, Expr, Comment), ok).
-else.
-define(assertNotMatch(Guard, Expr, Comment),
        begin ((fun () ->
            X__V = (Expr),
            case X__V of
                Guard -> erlang:error({assertNotMatch, [{module, ?MODULE}, {line, ?LINE}, {comment, (Comment)}, {expression, (??Expr)}, {pattern, (??Guard)}, {value, X__V}]});
                _ -> ok
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertEqual(Expect, Expr), ok).
-else.
-define(assertEqual(Expect, Expr),
        begin ((fun () ->
            X__X = (Expect),
            case (Expr) of
                X__X -> ok;
                X__V -> erlang:error({assertEqual, [{module, ?MODULE}, {line, ?LINE}, {expression, (??Expr)}, {expected, X__X}, {value, X__V}]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertEqual(Expect, Expr, Comment), ok).
-else.
-define(assertEqual(Expect, Expr, Comment),
        begin ((fun () ->
            X__X = (Expect),
            case (Expr) of
                X__X -> ok;
                X__V -> erlang:error({assertEqual, [{module, ?MODULE}, {line, ?LINE}, {comment, (Comment)}, {expression, (??Expr)}, {expected, X__X}, {value, X__V}]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertNotEqual(Unexpected, Expr), ok).
-else.
-define(assertNotEqual(Unexpected, Expr),
        begin ((fun () ->
            X__X = (Unexpected),
            case (Expr) of
                X__X -> erlang:error({assertNotEqual, [{module, ?MODULE}, {line, ?LINE}, {expression, (??Expr)}, {value, X__X}]});
                _ -> ok
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertNotEqual(Unexpected, Expr, Comment), ok).
-else.
-define(assertNotEqual(Unexpected, Expr, Comment),
        begin ((fun () ->
            X__X = (Unexpected),
            case (Expr) of
                X__X -> erlang:error({assertNotEqual, [{module, ?MODULE}, {line, ?LINE}, {comment, (Comment)}, {expression, (??Expr)}, {value, X__X}]});
                _ -> ok
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertException(Class, Term, Expr), ok).
-else.
-define(assertException(Class, Term, Expr),
        begin ((fun () ->
            try (Expr) of
                X__V -> erlang:error({assertException, [{module, ?MODULE}, {line, ?LINE}, {expression, (??Expr)}, {pattern, "{ " ++ (??Class) ++ " , " ++ (??Term) ++ " , [...] }"}, {unexpected_success, X__V}]})
            catch
                Class:Term -> ok;
                X__C:X__T:X__S -> erlang:error({assertException, [{module, ?MODULE}, {line, ?LINE}, {expression, (??Expr)}, {pattern, "{ " ++ (??Class) ++ " , " ++ (??Term) ++ " , [...] }"}, {unexpected_exception, {X__C, X__T, X__S}}]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertException(Class, Term, Expr, Comment), ok).
-else.
-define(assertException(Class, Term, Expr, Comment),
        begin ((fun () ->
            try (Expr) of
                X__V -> erlang:error({assertException, [{module, ?MODULE}, {line, ?LINE}, {comment, (Comment)}, {expression, (??Expr)}, {pattern, "{ " ++ (??Class) ++ " , " ++ (??Term) ++ " , [...] }"}, {unexpected_success, X__V}]})
            catch
                Class:Term -> ok;
                X__C:X__T:X__S -> erlang:error({assertException, [{module, ?MODULE}, {line, ?LINE}, {comment, (Comment)}, {expression, (??Expr)}, {pattern, "{ " ++ (??Class) ++ " , " ++ (??Term) ++ " , [...] }"}, {unexpected_exception, {X__C, X__T, X__S}}]})
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertNotException(Class, Term, Expr), ok).
-else.
-define(assertNotException(Class, Term, Expr),
        begin ((fun () ->
            try (Expr) of
                _ -> ok
            catch
                X__C:X__T:X__S ->
                    case X__C of
                        Class ->
                            case X__T of
                                Term -> erlang:error({assertNotException, [{module, ?MODULE}, {line, ?LINE}, {expression, (??Expr)}, {pattern, "{ " ++ (??Class) ++ " , " ++ (??Term) ++ " , [...] }"}, {unexpected_exception, {X__C, X__T, X__S}}]});
                                _ -> ok
                            end;
                        _ -> ok
                    end
            end
        end)()) end).
-endif.
-ifdef(NOASSERT).
-define(assertNotException(Class, Term, Expr, Comment), ok).
-else.
-define(assertNotException(Class, Term, Expr, Comment),
        begin ((fun () ->
            try (Expr) of
                _ -> ok
            catch
                X__C:X__T:X__S ->
                    case X__C of
                        Class ->
                            case X__T of
                                Term -> erlang:error({assertNotException, [{module, ?MODULE}, {line, ?LINE}, {comment, (Comment)}, {expression, (??Expr)}, {pattern, "{ " ++ (??Class) ++ " , " ++ (??Term) ++ " , [...] }"}, {unexpected_exception, {X__C, X__T, X__S}}]});
                                _ -> ok
                            end;
                        _ -> ok
                    end
            end
        end)()) end).
-endif.
-define(assertError(Term, Expr), ?assertException(error, Term, Expr)).
-define(assertError(Term, Expr, Comment), ?assertException(error, Term, Expr, Comment)).
-define(assertExit(Term, Expr), ?assertException(exit, Term, Expr)).
-define(assertExit(Term, Expr, Comment), ?assertException(exit, Term, Expr, Comment)).
-define(assertThrow(Term, Expr), ?assertException(throw, Term, Expr)).
-define(assertThrow(Term, Expr, Comment), ?assertException(throw, Term, Expr, Comment)).
-endif.
