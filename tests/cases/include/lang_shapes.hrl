%% Records and macros shared by the lang_includes case.
-record(point, {x = 0, y = 0}).
-record(circle, {center = #point{}, radius = 1}).
-record(rect, {top_left :: #point{}, bottom_right :: #point{},
               label = "rect" :: string()}).

-define(PI, 3.14159).
-define(AREA_UNITS, "square units").

-include("lang_more.hrl").
