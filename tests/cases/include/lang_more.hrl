%% Included by lang_shapes.hrl: includes nest, relative to the includer.
-define(DOUBLE(X), (2 * (X))).
-ifndef(SHAPES_VERSION).
-define(SHAPES_VERSION, 2).
-endif.
