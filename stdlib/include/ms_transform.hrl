%% stdlib/include/ms_transform.hrl for act. OTP's header turns on the
%% ms_transform parse transform; act always translates ets:fun2ms/1 and
%% dbg:fun2ms/1 of a literal fun at compile time, so there is nothing to
%% turn on.
