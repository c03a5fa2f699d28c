%% Shapes for books_macros_include: records and macros shared through -include.
-record(circle, {radius = 1.0}).
-record(rectangle, {length, width}).
-record(triangle, {a, b, c}).
-define(PI, 3.14159265358979).
-define(SQUARE(X), ((X) * (X))).
