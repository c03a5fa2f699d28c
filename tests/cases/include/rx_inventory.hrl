%% Records and macros shared by the inventory script (rx_include_inventory).
-record(item, {sku, name, qty = 0, price = 0.0, tags = []}).
-record(order, {id, lines = [], status = open}).
-define(LOW_STOCK, 5).
-define(money(X), (round((X) * 100) / 100)).
-define(is_low(I), (I#item.qty < ?LOW_STOCK)).
