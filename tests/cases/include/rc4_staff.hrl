-ifndef(RC4_STAFF_HRL).
-define(RC4_STAFF_HRL, true).
-record(employee, {id :: integer(), name = "" :: string(), dept = engineering :: atom(),
                   salary = 0, manager = undefined, skills = []}).
-record(dept, {name, budget = 100000, head}).
-define(RAISE(E, Pct), E#employee{salary = E#employee.salary * (100 + Pct) div 100}).
-define(LOG(Fmt, Args), io:format("[~s:~w] " ++ Fmt ++ "~n", [?MODULE_STRING, ?LINE | Args])).
-define(MAX(A, B), (if A > B -> A; true -> B end)).
-define(IS_SENIOR(E), (E#employee.salary > 5000)).
-endif.
