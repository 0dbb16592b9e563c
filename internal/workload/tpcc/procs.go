package tpcc

// Server-side transactions (--procedures): each of the five transactions
// is one call of a server-side routine, as HammerDB runs TPROC-C, so a
// transaction costs one round trip instead of one per statement
// (New-Order: about 50). The routines do what txn.go's client-side
// transactions do, statement for statement, and return the same row
// counts.
//
// On PostgreSQL they are PL/pgSQL functions that each worker's session
// creates in its own temporary schema (pg_temp): they need no privilege
// beyond TEMP, clash with nothing, and go with the session, so a killed
// run leaves nothing behind. On MySQL/MariaDB, which has no temporary
// routines, they are stored procedures named ceiling_tpcc_* in the
// database, marked as ceiling's by their comment, created (again) when a
// run starts and dropped by `ceiling cleanup tpcc`; a routine of that name
// without the mark is someone else's and is left alone (the run refuses).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ceiling-db/ceiling/internal/metrics"
	"github.com/ceiling-db/ceiling/internal/target"
)

// unusedItemMark starts the message of the exception New-Order's function
// raises at the unused item (clause 2.4.2.3); the rows it touched until
// then follow it.
const unusedItemMark = "ceiling tpcc: unused item, rows "

// pgProcSource is the PostgreSQL functions' source; {t} is table t in ceiling's
// namespace.
const pgProcSource = `
CREATE OR REPLACE FUNCTION pg_temp.ceiling_tpcc_new_order(p_w int, p_d int, p_c int, p_items int[], p_supply int[], p_qty int[], p_all_local int, p_ts timestamp)
RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE
	v_discount numeric; v_last text; v_credit text; v_wtax numeric; v_dtax numeric; v_next int;
	v_price numeric; v_iname text; v_idata text; v_qty int; v_sdata text; v_dist text;
	v_total numeric := 0; v_amount numeric; n bigint := 0; i int;
BEGIN
	SELECT c_discount, c_last, c_credit INTO v_discount, v_last, v_credit FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
	IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: customer [% % %] not found: is the dataset complete? (ceiling check tpcc)', p_w, p_d, p_c; END IF;
	SELECT w_tax INTO v_wtax FROM {warehouse} WHERE w_id = p_w;
	IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: warehouse [%] not found: is the dataset complete? (ceiling check tpcc)', p_w; END IF;
	SELECT d_tax, d_next_o_id INTO v_dtax, v_next FROM {district} WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
	IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: district [% %] not found: is the dataset complete? (ceiling check tpcc)', p_w, p_d; END IF;
	n := 3;
	UPDATE {district} SET d_next_o_id = v_next + 1 WHERE d_w_id = p_w AND d_id = p_d;
	INSERT INTO {orders} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (v_next, p_d, p_w, p_c, p_ts, NULL, cardinality(p_items), p_all_local);
	INSERT INTO {new_order} (no_o_id, no_d_id, no_w_id) VALUES (v_next, p_d, p_w);
	n := n + 3;
	FOR i IN 1 .. cardinality(p_items) LOOP
		SELECT i_price, i_name, i_data INTO v_price, v_iname, v_idata FROM {item} WHERE i_id = p_items[i];
		IF NOT FOUND THEN RAISE EXCEPTION '` + unusedItemMark + `%', n; END IF;
		SELECT s_quantity, s_data, CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
			WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
			INTO v_qty, v_sdata, v_dist FROM {stock} WHERE s_w_id = p_supply[i] AND s_i_id = p_items[i] FOR UPDATE;
		IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: stock [% %] not found: is the dataset complete? (ceiling check tpcc)', p_supply[i], p_items[i]; END IF;
		n := n + 2;
		IF v_qty >= p_qty[i] + 10 THEN v_qty := v_qty - p_qty[i]; ELSE v_qty := v_qty - p_qty[i] + 91; END IF;
		UPDATE {stock} SET s_quantity = v_qty, s_ytd = s_ytd + p_qty[i], s_order_cnt = s_order_cnt + 1,
			s_remote_cnt = s_remote_cnt + CASE WHEN p_supply[i] <> p_w THEN 1 ELSE 0 END
			WHERE s_w_id = p_supply[i] AND s_i_id = p_items[i];
		v_amount := round(p_qty[i] * v_price, 2);
		v_total := v_total + v_amount;
		INSERT INTO {order_line} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
			VALUES (v_next, p_d, p_w, i, p_items[i], p_supply[i], NULL, p_qty[i], v_amount, v_dist);
		n := n + 2;
	END LOOP;
	v_total := v_total * (1 - v_discount) * (1 + v_wtax + v_dtax); -- the order's total, shown on the terminal only
	RETURN n;
END $f$;

CREATE OR REPLACE FUNCTION pg_temp.ceiling_tpcc_payment(p_w int, p_d int, p_cw int, p_cd int, p_cid int, p_by_name bool, p_last text, p_amount numeric, p_ts timestamp)
RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE
	v_wname text; v_dname text; v_s1 text; v_s2 text; v_city text; v_state text; v_zip text;
	v_first text; v_middle text; v_last text; v_phone text; v_credit text; v_limit numeric; v_discount numeric; v_balance numeric;
	v_ids int[]; v_cid int := p_cid; v_data text; n bigint := 0;
BEGIN
	UPDATE {warehouse} SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
	SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_wname, v_s1, v_s2, v_city, v_state, v_zip FROM {warehouse} WHERE w_id = p_w;
	IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: warehouse [%] not found: is the dataset complete? (ceiling check tpcc)', p_w; END IF;
	UPDATE {district} SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
	SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_dname, v_s1, v_s2, v_city, v_state, v_zip FROM {district} WHERE d_w_id = p_w AND d_id = p_d;
	IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: district [% %] not found: is the dataset complete? (ceiling check tpcc)', p_w, p_d; END IF;
	n := 2;
	IF p_by_name THEN
		SELECT array_agg(c_id ORDER BY c_first) INTO v_ids FROM {customer} WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last;
		IF v_ids IS NULL THEN RAISE EXCEPTION 'tpcc: no customer named % in warehouse % district %: is the dataset complete? (ceiling check tpcc)', p_last, p_cw, p_cd; END IF;
		v_cid := v_ids[(cardinality(v_ids) + 1) / 2];
		n := n + cardinality(v_ids);
	END IF;
	SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance
		INTO v_first, v_middle, v_last, v_s1, v_s2, v_city, v_state, v_zip, v_phone, v_credit, v_limit, v_discount, v_balance
		FROM {customer} WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid FOR UPDATE;
	IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: customer [% % %] not found: is the dataset complete? (ceiling check tpcc)', p_cw, p_cd, v_cid; END IF;
	n := n + 1;
	IF v_credit = 'BC' THEN -- bad credit: prepend the payment to C_DATA (clause 2.5.2.2)
		SELECT c_data INTO v_data FROM {customer} WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
		v_data := left(format('%s %s %s %s %s %s|', v_cid, p_cd, p_cw, p_d, p_w, to_char(p_amount, 'FM999999990.00')) || coalesce(v_data, ''), 500);
		UPDATE {customer} SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1, c_data = v_data
			WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
	ELSE
		UPDATE {customer} SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1
			WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
	END IF;
	INSERT INTO {history} (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (v_cid, p_cd, p_cw, p_d, p_w, p_ts, p_amount, v_wname || '    ' || v_dname);
	RETURN n + 2;
END $f$;

CREATE OR REPLACE FUNCTION pg_temp.ceiling_tpcc_order_status(p_w int, p_d int, p_cid int, p_by_name bool, p_last text)
RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE
	v_ids int[]; v_cid int := p_cid; v_balance numeric; v_first text; v_middle text; v_last text;
	v_oid int; v_carrier int; v_entry timestamp; r record; n bigint := 0;
BEGIN
	IF p_by_name THEN
		SELECT array_agg(c_id ORDER BY c_first) INTO v_ids FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
		IF v_ids IS NULL THEN RAISE EXCEPTION 'tpcc: no customer named % in warehouse % district %: is the dataset complete? (ceiling check tpcc)', p_last, p_w, p_d; END IF;
		v_cid := v_ids[(cardinality(v_ids) + 1) / 2];
		n := cardinality(v_ids);
	END IF;
	SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_cid;
	IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: customer [% % %] not found: is the dataset complete? (ceiling check tpcc)', p_w, p_d, v_cid; END IF;
	n := n + 1;
	SELECT o_id, o_carrier_id, o_entry_d INTO v_oid, v_carrier, v_entry FROM {orders}
		WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_cid ORDER BY o_id DESC LIMIT 1;
	IF NOT FOUND THEN RETURN n; END IF; -- a customer without orders has nothing more to show
	n := n + 1;
	FOR r IN SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM {order_line}
		WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_oid LOOP
		n := n + 1;
	END LOOP;
	RETURN n;
END $f$;

CREATE OR REPLACE FUNCTION pg_temp.ceiling_tpcc_delivery(p_w int, p_carrier int, p_ts timestamp, OUT n bigint, OUT empty int)
LANGUAGE plpgsql AS $f$
DECLARE
	v_d int; v_oid int; v_cid int; v_del bigint; v_lines bigint; v_sum numeric;
BEGIN
	n := 0; empty := 0;
	FOR v_d IN 1 .. 10 LOOP
		SELECT no_o_id INTO v_oid FROM {new_order} WHERE no_w_id = p_w AND no_d_id = v_d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
		IF NOT FOUND THEN empty := empty + 1; CONTINUE; END IF;
		DELETE FROM {new_order} WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_oid;
		GET DIAGNOSTICS v_del = ROW_COUNT;
		IF v_del = 0 THEN empty := empty + 1; CONTINUE; END IF; -- delivered by a concurrent Delivery meanwhile
		SELECT o_c_id INTO v_cid FROM {orders} WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_oid;
		IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: order [% % %] not found: is the dataset complete? (ceiling check tpcc)', p_w, v_d, v_oid; END IF;
		UPDATE {orders} SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_oid;
		UPDATE {order_line} SET ol_delivery_d = p_ts WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_oid;
		GET DIAGNOSTICS v_lines = ROW_COUNT;
		SELECT SUM(ol_amount) INTO v_sum FROM {order_line} WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_oid;
		UPDATE {customer} SET c_balance = c_balance + round(coalesce(v_sum, 0), 2), c_delivery_cnt = c_delivery_cnt + 1
			WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_cid;
		n := n + 3 + v_lines;
	END LOOP;
END $f$;

CREATE OR REPLACE FUNCTION pg_temp.ceiling_tpcc_stock_level(p_w int, p_d int, p_threshold int)
RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE
	v_next int; v_low bigint;
BEGIN
	SELECT d_next_o_id INTO v_next FROM {district} WHERE d_w_id = p_w AND d_id = p_d;
	IF NOT FOUND THEN RAISE EXCEPTION 'tpcc: district [% %] not found: is the dataset complete? (ceiling check tpcc)', p_w, p_d; END IF;
	SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM {order_line}, {stock}
		WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
		  AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
	RETURN 2;
END $f$;
`

// mysqlProc is one MySQL procedure: its name after ceiling_tpcc_, its
// parameters and its body (between BEGIN and END).
type mysqlProc struct{ name, params, body string }

// mysqlProcs are the procedures on MySQL/MariaDB, HammerDB's way there:
// each runs its own transaction (START TRANSACTION … COMMIT; an error
// rolls it back and is passed on) and ends with a SELECT of its counts.
// New-Order takes its lines as comma-separated lists.
var mysqlProcs = []mysqlProc{
	{"new_order", "p_w INT, p_d INT, p_c INT, p_items VARCHAR(255), p_supply VARCHAR(255), p_qty VARCHAR(255), p_cnt INT, p_all_local INT, p_ts DATETIME", `
	DECLARE v_discount, v_wtax, v_dtax DECIMAL(4,4);
	DECLARE v_last VARCHAR(16); DECLARE v_credit CHAR(2);
	DECLARE v_next, v_qty, v_item, v_supply, v_olqty, i INT;
	DECLARE v_price DECIMAL(5,2); DECLARE v_amount DECIMAL(6,2); DECLARE v_total DECIMAL(14,4) DEFAULT 0;
	DECLARE v_iname VARCHAR(24); DECLARE v_idata, v_sdata VARCHAR(50); DECLARE v_dist CHAR(24);
	DECLARE v_msg VARCHAR(200); DECLARE n BIGINT DEFAULT 0; DECLARE v_found INT DEFAULT 1;
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	START TRANSACTION;
	SELECT c_discount, c_last, c_credit INTO v_discount, v_last, v_credit FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
	IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: customer [', p_w, ' ', p_d, ' ', p_c, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
	SELECT w_tax INTO v_wtax FROM {warehouse} WHERE w_id = p_w;
	IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: warehouse [', p_w, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
	SELECT d_tax, d_next_o_id INTO v_dtax, v_next FROM {district} WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
	IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: district [', p_w, ' ', p_d, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
	SET n = 3;
	UPDATE {district} SET d_next_o_id = v_next + 1 WHERE d_w_id = p_w AND d_id = p_d;
	INSERT INTO {orders} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (v_next, p_d, p_w, p_c, p_ts, NULL, p_cnt, p_all_local);
	INSERT INTO {new_order} (no_o_id, no_d_id, no_w_id) VALUES (v_next, p_d, p_w);
	SET n = n + 3;
	SET i = 1;
	WHILE i <= p_cnt DO
		SET v_item = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', i), ',', -1) AS SIGNED);
		SET v_supply = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', i), ',', -1) AS SIGNED);
		SET v_olqty = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_qty, ',', i), ',', -1) AS SIGNED);
		SELECT i_price, i_name, i_data INTO v_price, v_iname, v_idata FROM {item} WHERE i_id = v_item;
		IF v_found = 0 THEN SET v_msg = CONCAT('` + unusedItemMark + `', n); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
		SELECT s_quantity, s_data, CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
			WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
			INTO v_qty, v_sdata, v_dist FROM {stock} WHERE s_w_id = v_supply AND s_i_id = v_item FOR UPDATE;
		IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: stock [', v_supply, ' ', v_item, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
		SET n = n + 2;
		IF v_qty >= v_olqty + 10 THEN SET v_qty = v_qty - v_olqty; ELSE SET v_qty = v_qty - v_olqty + 91; END IF;
		UPDATE {stock} SET s_quantity = v_qty, s_ytd = s_ytd + v_olqty, s_order_cnt = s_order_cnt + 1,
			s_remote_cnt = s_remote_cnt + IF(v_supply <> p_w, 1, 0)
			WHERE s_w_id = v_supply AND s_i_id = v_item;
		SET v_amount = ROUND(v_olqty * v_price, 2);
		SET v_total = v_total + v_amount;
		INSERT INTO {order_line} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
			VALUES (v_next, p_d, p_w, i, v_item, v_supply, NULL, v_olqty, v_amount, v_dist);
		SET n = n + 2;
		SET i = i + 1;
	END WHILE;
	SET v_total = v_total * (1 - v_discount) * (1 + v_wtax + v_dtax); -- the order's total, shown on the terminal only
	COMMIT;
	SELECT n;`},
	{"payment", "p_w INT, p_d INT, p_cw INT, p_cd INT, p_cid INT, p_by_name INT, p_last VARCHAR(16), p_amount DECIMAL(6,2), p_ts DATETIME", `
	DECLARE v_wname, v_dname VARCHAR(10); DECLARE v_s1, v_s2, v_city VARCHAR(20); DECLARE v_state CHAR(2); DECLARE v_zip CHAR(9);
	DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2); DECLARE v_last VARCHAR(16); DECLARE v_phone CHAR(16); DECLARE v_credit CHAR(2);
	DECLARE v_limit, v_balance DECIMAL(12,2); DECLARE v_discount DECIMAL(4,4);
	DECLARE v_cnt, v_cid INT; DECLARE v_ids TEXT; DECLARE v_data VARCHAR(500);
	DECLARE v_msg VARCHAR(200); DECLARE n BIGINT DEFAULT 0; DECLARE v_found INT DEFAULT 1;
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	SET v_cid = p_cid;
	START TRANSACTION;
	UPDATE {warehouse} SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
	SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_wname, v_s1, v_s2, v_city, v_state, v_zip FROM {warehouse} WHERE w_id = p_w;
	IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: warehouse [', p_w, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
	UPDATE {district} SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
	SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_dname, v_s1, v_s2, v_city, v_state, v_zip FROM {district} WHERE d_w_id = p_w AND d_id = p_d;
	IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: district [', p_w, ' ', p_d, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
	SET n = 2;
	IF p_by_name <> 0 THEN
		SELECT COUNT(*), GROUP_CONCAT(c_id ORDER BY c_first) INTO v_cnt, v_ids FROM {customer} WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last;
		IF v_cnt = 0 THEN SET v_msg = CONCAT('tpcc: no customer named ', p_last, ' in warehouse ', p_cw, ' district ', p_cd, ': is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
		SET v_cid = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(v_ids, ',', (v_cnt + 1) DIV 2), ',', -1) AS SIGNED);
		SET n = n + v_cnt;
	END IF;
	SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance
		INTO v_first, v_middle, v_last, v_s1, v_s2, v_city, v_state, v_zip, v_phone, v_credit, v_limit, v_discount, v_balance
		FROM {customer} WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid FOR UPDATE;
	IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: customer [', p_cw, ' ', p_cd, ' ', v_cid, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
	SET n = n + 1;
	IF v_credit = 'BC' THEN -- bad credit: prepend the payment to C_DATA (clause 2.5.2.2)
		SELECT c_data INTO v_data FROM {customer} WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
		SET v_data = LEFT(CONCAT(v_cid, ' ', p_cd, ' ', p_cw, ' ', p_d, ' ', p_w, ' ', p_amount, '|', IFNULL(v_data, '')), 500);
		UPDATE {customer} SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1, c_data = v_data
			WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
	ELSE
		UPDATE {customer} SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1
			WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
	END IF;
	INSERT INTO {history} (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (v_cid, p_cd, p_cw, p_d, p_w, p_ts, p_amount, CONCAT(v_wname, '    ', v_dname));
	COMMIT;
	SELECT n + 2;`},
	{"order_status", "p_w INT, p_d INT, p_cid INT, p_by_name INT, p_last VARCHAR(16)", `
	DECLARE v_cnt, v_cid, v_oid, v_carrier INT; DECLARE v_ids TEXT; DECLARE v_balance DECIMAL(12,2);
	DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2); DECLARE v_last VARCHAR(16); DECLARE v_entry DATETIME;
	DECLARE v_lines BIGINT; DECLARE v_sum DECIMAL(14,2); DECLARE v_qty, v_items BIGINT; DECLARE v_delivered DATETIME;
	DECLARE v_msg VARCHAR(200); DECLARE n BIGINT DEFAULT 0; DECLARE v_found INT DEFAULT 1;
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	SET v_cid = p_cid;
	START TRANSACTION;
	IF p_by_name <> 0 THEN
		SELECT COUNT(*), GROUP_CONCAT(c_id ORDER BY c_first) INTO v_cnt, v_ids FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
		IF v_cnt = 0 THEN SET v_msg = CONCAT('tpcc: no customer named ', p_last, ' in warehouse ', p_w, ' district ', p_d, ': is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
		SET v_cid = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(v_ids, ',', (v_cnt + 1) DIV 2), ',', -1) AS SIGNED);
		SET n = v_cnt;
	END IF;
	SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_cid;
	IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: customer [', p_w, ' ', p_d, ' ', v_cid, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
	SET n = n + 1;
	SELECT o_id, o_carrier_id, o_entry_d INTO v_oid, v_carrier, v_entry FROM {orders}
		WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_cid ORDER BY o_id DESC LIMIT 1;
	IF v_found = 1 THEN -- a customer without orders has nothing more to show
		SET n = n + 1;
		SELECT COUNT(*), SUM(ol_i_id + ol_supply_w_id), SUM(ol_quantity), SUM(ol_amount), MAX(ol_delivery_d) INTO v_lines, v_items, v_qty, v_sum, v_delivered
			FROM {order_line} WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_oid;
		SET n = n + v_lines;
	END IF;
	COMMIT;
	SELECT n;`},
	{"delivery", "p_w INT, p_carrier INT, p_ts DATETIME", `
	DECLARE v_d, v_oid, v_cid INT; DECLARE v_lines BIGINT; DECLARE v_sum DECIMAL(14,2);
	DECLARE v_msg VARCHAR(200); DECLARE n BIGINT DEFAULT 0; DECLARE v_empty INT DEFAULT 0; DECLARE v_found INT DEFAULT 1;
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	START TRANSACTION;
	SET v_d = 1;
	WHILE v_d <= 10 DO
		SET v_found = 1;
		SELECT no_o_id INTO v_oid FROM {new_order} WHERE no_w_id = p_w AND no_d_id = v_d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
		IF v_found = 0 THEN
			SET v_empty = v_empty + 1;
		ELSE
			DELETE FROM {new_order} WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_oid;
			IF ROW_COUNT() = 0 THEN
				SET v_empty = v_empty + 1; -- delivered by a concurrent Delivery meanwhile
			ELSE
				SELECT o_c_id INTO v_cid FROM {orders} WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_oid;
				IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: order [', p_w, ' ', v_d, ' ', v_oid, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
				UPDATE {orders} SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_oid;
				UPDATE {order_line} SET ol_delivery_d = p_ts WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_oid;
				SET v_lines = ROW_COUNT();
				SELECT SUM(ol_amount) INTO v_sum FROM {order_line} WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_oid;
				UPDATE {customer} SET c_balance = c_balance + ROUND(IFNULL(v_sum, 0), 2), c_delivery_cnt = c_delivery_cnt + 1
					WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_cid;
				SET n = n + 3 + v_lines;
			END IF;
		END IF;
		SET v_d = v_d + 1;
	END WHILE;
	COMMIT;
	SELECT n, v_empty;`},
	{"stock_level", "p_w INT, p_d INT, p_threshold INT", `
	DECLARE v_next INT; DECLARE v_low BIGINT;
	DECLARE v_msg VARCHAR(200); DECLARE v_found INT DEFAULT 1;
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
	DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
	START TRANSACTION;
	SELECT d_next_o_id INTO v_next FROM {district} WHERE d_w_id = p_w AND d_id = p_d;
	IF v_found = 0 THEN SET v_msg = CONCAT('tpcc: district [', p_w, ' ', p_d, '] not found: is the dataset complete? (ceiling check tpcc)'); SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg; END IF;
	SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM {order_line}, {stock}
		WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
		  AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
	COMMIT;
	SELECT 2;`},
}

// procMark is the comment that marks a MySQL procedure as ceiling's.
const procMark = "created by ceiling: tpcc --procedures"

// procCalls are one engine's calls, one statement each, run outside an
// explicit transaction: the call is the transaction.
type procCalls struct {
	newOrder, payment, orderStatus, delivery, stockLevel string
	lists                                                bool // New-Order's lines as comma-separated text (no arrays)
}

var (
	pgCalls = procCalls{
		newOrder:    "SELECT pg_temp.ceiling_tpcc_new_order($1, $2, $3, $4, $5, $6, $7, $8)",
		payment:     "SELECT pg_temp.ceiling_tpcc_payment($1, $2, $3, $4, $5, $6, $7, $8, $9)",
		orderStatus: "SELECT pg_temp.ceiling_tpcc_order_status($1, $2, $3, $4, $5)",
		delivery:    "SELECT n, empty FROM pg_temp.ceiling_tpcc_delivery($1, $2, $3)",
		stockLevel:  "SELECT pg_temp.ceiling_tpcc_stock_level($1, $2, $3)",
	}
	mysqlCalls = procCalls{
		newOrder:    "CALL ceiling_tpcc_new_order(?, ?, ?, ?, ?, ?, ?, ?, ?)",
		payment:     "CALL ceiling_tpcc_payment(?, ?, ?, ?, ?, ?, ?, ?, ?)",
		orderStatus: "CALL ceiling_tpcc_order_status(?, ?, ?, ?, ?)",
		delivery:    "CALL ceiling_tpcc_delivery(?, ?, ?)",
		stockLevel:  "CALL ceiling_tpcc_stock_level(?, ?, ?)",
		lists:       true,
	}
)

// mysqlProcName is the stored name of procedure name.
func mysqlProcName(d target.Dialect, name string) string { return d.Table("tpcc_" + name) }

// ProceduresSupported says whether --procedures can run on engine, and if
// not, why.
func ProceduresSupported(engine string) error {
	switch engine {
	case "postgres", "mysql":
		return nil
	case "sqlite":
		return errors.New("--procedures: SQLite has no server-side procedures (its transactions run in ceiling's process anyway)")
	}
	return fmt.Errorf("--procedures: not available on %s", engine)
}

// Advice implements workload.Advisor: a client-side run on a server
// whose verdict is CPU, contention, the client, the network or none is
// told of --procedures, which takes the per-statement round trips away
// (their protocol work on both sides, their time on the network, and row
// locks held across them).
//
// A server run bound by contention whose virtual users outnumber the
// warehouses' terminals (10 each in the specification, clause 4.2.2) is
// told to load more warehouses first: its users queue for the few
// warehouse and district rows every New-Order and Payment updates.
func (w *Workload) Advice(engine, bottleneck string) []string {
	if engine == "sqlite" {
		return nil // one writer at a time, whatever the rows
	}
	var out []string
	if bottleneck == "contention" && w.Warehouses > 0 {
		if vus := w.virtualUsers(); vus > TerminalsPerWH*w.Warehouses {
			n := (vus + TerminalsPerWH - 1) / TerminalsPerWH
			out = append(out, fmt.Sprintf("more warehouses: %d virtual users share %d warehouse(s), %d each where TPC-C gives a warehouse %d terminals, and queue for its warehouse and district rows (`ceiling prepare tpcc --warehouses %d --force`, then run at the same -c)",
				vus, w.Warehouses, (vus+w.Warehouses-1)/w.Warehouses, TerminalsPerWH, n))
		}
	}
	if w.run.procedures || ProceduresSupported(engine) != nil {
		return out
	}
	switch bottleneck {
	case "cpu", "contention", "client", "network", "none":
		out = append(out, "--procedures: each transaction as one call of a server-side routine, as HammerDB runs TPROC-C, instead of a round trip per statement (their protocol work on both sides and their time on the network go, and row locks are no longer held across round trips); gain not predicted from this run")
	}
	return out
}

// TerminalsPerWH is the terminals the specification gives each warehouse
// (clause 4.2.2).
const TerminalsPerWH = 10

// virtualUsers is the number of virtual users (workers) the run made.
func (w *Workload) virtualUsers() int {
	w.run.mu.Lock()
	defer w.run.mu.Unlock()
	return len(w.run.made)
}

// createProcs creates the PostgreSQL functions in conn's session.
func createProcs(ctx context.Context, conn target.Conn, d target.Dialect) error {
	src := pgProcSource
	for _, t := range dataTables {
		src = strings.ReplaceAll(src, "{"+t+"}", d.Table(t))
	}
	// One statement per call: the extended protocol takes no more.
	for _, f := range strings.Split(src, "\nCREATE OR REPLACE FUNCTION ")[1:] {
		if _, err := conn.Exec(ctx, "CREATE OR REPLACE FUNCTION "+f); err != nil {
			return fmt.Errorf("tpcc: create the transactions' functions (--procedures): %w", err)
		}
	}
	return nil
}

// foreignProcs lists the MySQL routines with one of the procedures' names
// that ceiling did not make.
func foreignProcs(ctx context.Context, c target.Conn, d target.Dialect) ([]string, error) {
	rows, err := c.Query(ctx, "SELECT ROUTINE_NAME, ROUTINE_COMMENT FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE ?", d.Table("tpcc\\_%"))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var foreign []string
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			return nil, err
		}
		ours := slices.ContainsFunc(mysqlProcs, func(p mysqlProc) bool { return strings.EqualFold(mysqlProcName(d, p.name), name) })
		if ours && comment != procMark {
			foreign = append(foreign, name)
		}
	}
	return foreign, errors.Join(rows.Err(), rows.Close())
}

// installProcs (re)creates the MySQL procedures, once per run.
func installProcs(ctx context.Context, t target.Target, sharded bool) error {
	d := t.Dialect()
	c, err := t.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	foreign, err := foreignProcs(ctx, c, d)
	if err != nil {
		return fmt.Errorf("--procedures: list the database's routines: %w", err)
	}
	if len(foreign) > 0 {
		return fmt.Errorf("--procedures: routine %s: %w", strings.Join(foreign, ", "), target.ErrForeignObject)
	}
	for _, p := range mysqlProcs {
		name := mysqlProcName(d, p.name)
		body := p.body
		for _, tb := range dataTables {
			body = strings.ReplaceAll(body, "{"+tb+"}", d.Table(tb))
		}
		for _, stmt := range []string{
			"DROP PROCEDURE IF EXISTS " + name,
			"CREATE PROCEDURE " + name + "(" + p.params + ") COMMENT '" + procMark + "'\nBEGIN" + body + "\nEND",
		} {
			if _, err := c.Exec(ctx, stmt); err != nil {
				if sharded && strings.Contains(err.Error(), "already exists") {
					continue // another shard, attaching at the same time, made it
				}
				return fmt.Errorf("--procedures: create procedure %s (the user needs CREATE ROUTINE and ALTER ROUTINE on the database): %w", name, err)
			}
		}
	}
	return nil
}

// DropExtras implements workload.ExtraDropper: cleanup drops the
// procedures ceiling made on MySQL/MariaDB (PostgreSQL's functions go with
// their sessions).
func (w *Workload) DropExtras(ctx context.Context, t target.Target) ([]string, error) {
	d := t.Dialect()
	if d.Engine != "mysql" {
		return nil, nil
	}
	c, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var dropped []string
	for _, p := range mysqlProcs {
		name := mysqlProcName(d, p.name)
		var comment string
		ok, err := target.QueryRow(ctx, c, "SELECT ROUTINE_COMMENT FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME = ?", []any{&comment}, name)
		if err != nil {
			return dropped, fmt.Errorf("tpcc: look up procedure %s: %w", name, err)
		}
		if !ok || comment != procMark {
			continue // absent, or not ceiling's
		}
		if _, err := c.Exec(ctx, "DROP PROCEDURE "+name); err != nil {
			return dropped, fmt.Errorf("tpcc: drop procedure %s: %w", name, err)
		}
		dropped = append(dropped, "procedure "+name)
	}
	return dropped, nil
}

// call runs one transaction's function call and counts it as committed,
// or as rolled back when the server failed it (a lost connection rolls
// nothing back that ceiling could count).
func (k *vuser) call(ctx context.Context, sql string, dest []any, args ...any) error {
	_, err := k.row(ctx, sql, dest, args...)
	switch {
	case err == nil:
		k.w.run.stats.commits.Add(1)
	case k.t.Classify(err) != metrics.ErrConnLost:
		k.w.run.stats.rollbacks.Add(1)
	}
	return err
}

// flag passes a boolean argument: a bool for PostgreSQL's functions, 0 or
// 1 for MySQL's procedures.
func (k *vuser) flag(b bool) any {
	if !k.calls.lists {
		return b
	}
	if b {
		return 1
	}
	return 0
}

// newOrderProc is New-Order as one function call.
func (k *vuser) newOrderProc(ctx context.Context, in *newOrderIn) (int64, error) {
	allLocal := 0
	if in.allLocal {
		allLocal = 1
	}
	var n int64
	var err error
	if k.calls.lists {
		var items, supply, qty []byte
		for i, l := range in.lines {
			if i > 0 {
				items, supply, qty = append(items, ','), append(supply, ','), append(qty, ',')
			}
			items, supply, qty = strconv.AppendInt(items, int64(l.item), 10), strconv.AppendInt(supply, int64(l.supplyW), 10), strconv.AppendInt(qty, int64(l.qty), 10)
		}
		err = k.call(ctx, k.calls.newOrder, []any{&n}, in.w, in.d, in.c, string(items), string(supply), string(qty), len(in.lines), allLocal, txnTime())
	} else {
		items := make([]int32, len(in.lines))
		supply := make([]int32, len(in.lines))
		qty := make([]int32, len(in.lines))
		for i, l := range in.lines {
			items[i], supply[i], qty[i] = int32(l.item), int32(l.supplyW), int32(l.qty)
		}
		err = k.call(ctx, k.calls.newOrder, []any{&n}, in.w, in.d, in.c, items, supply, qty, allLocal, txnTime())
	}
	if err != nil {
		if i := strings.Index(err.Error(), unusedItemMark); i >= 0 {
			_, _ = fmt.Sscan(err.Error()[i+len(unusedItemMark):], &n)
			return n, errUnusedItem
		}
		return 0, err
	}
	return n, nil
}

// paymentProc is Payment as one function call.
func (k *vuser) paymentProc(ctx context.Context, in *paymentIn) (int64, error) {
	var n int64
	err := k.call(ctx, k.calls.payment, []any{&n}, in.w, in.d, in.cw, in.cd, in.cust.id, k.flag(in.cust.byName), in.cust.last, in.amount, txnTime())
	return n, err
}

// orderStatusProc is Order-Status as one function call.
func (k *vuser) orderStatusProc(ctx context.Context, in *orderStatusIn) (int64, error) {
	var n int64
	err := k.call(ctx, k.calls.orderStatus, []any{&n}, in.w, in.d, in.cust.id, k.flag(in.cust.byName), in.cust.last)
	return n, err
}

// deliveryProc is Delivery as one function call.
func (k *vuser) deliveryProc(ctx context.Context, in *deliveryIn) (int64, error) {
	var n, empty int64
	if err := k.call(ctx, k.calls.delivery, []any{&n, &empty}, in.w, in.carrier, txnTime()); err != nil {
		return 0, err
	}
	k.w.run.stats.emptyDelivery.Add(empty)
	return n, nil
}

// stockLevelProc is Stock-Level as one function call.
func (k *vuser) stockLevelProc(ctx context.Context, in *stockLevelIn) (int64, error) {
	var n int64
	err := k.call(ctx, k.calls.stockLevel, []any{&n}, in.w, in.d, in.threshold)
	return n, err
}
