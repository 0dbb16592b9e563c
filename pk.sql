ALTER TABLE ceiling.warehouse ADD PRIMARY KEY (w_id);
ALTER TABLE ceiling.district ADD PRIMARY KEY (d_w_id, d_id);
ALTER TABLE ceiling.customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id);
ALTER TABLE ceiling.orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id);
ALTER TABLE ceiling.new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE ceiling.order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE ceiling.item ADD PRIMARY KEY (i_id);
ALTER TABLE ceiling.stock ADD PRIMARY KEY (s_w_id, s_i_id);
