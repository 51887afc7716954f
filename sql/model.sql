-- A model survives tables, text and binary COPY (what pg_dump uses), and
-- the partial state survives its own text form.
CREATE TABLE model_pts AS
SELECT i AS id, ARRAY[(i % 2) * 4 + cos(i * 2.399) * 0.5, sin(i * 2.399) * 0.5]::float8[] AS f
FROM generate_series(1, 200) i;

CREATE TABLE saved AS SELECT 1 AS id, svc_train(f, '{"budget": 25}') AS model FROM model_pts;
CREATE TABLE restored_text (id int, model bytea);
CREATE TABLE restored_binary (id int, model bytea);

\copy saved TO 'model_round_trip.txt'
\copy restored_text FROM 'model_round_trip.txt'
\copy saved TO 'model_round_trip.bin' WITH (FORMAT binary)
\copy restored_binary FROM 'model_round_trip.bin' WITH (FORMAT binary)

SELECT s.model = t.model AS text_copy_identical, s.model = b.model AS binary_copy_identical
FROM saved s, restored_text t, restored_binary b;

-- the restored model scores exactly like the original
SELECT bool_and(svc_decision(s.model, p.f) = svc_decision(t.model, p.f)) AS same_decisions,
       bool_and(svc_predict(s.model, p.f) = svc_predict(b.model, p.f)) AS same_clusters
FROM saved s, restored_text t, restored_binary b, model_pts p;

-- scoring every row of a table with one stored model
SELECT count(*) AS scored FROM model_pts, saved WHERE svc_decision(saved.model, model_pts.f) IS NOT NULL;

-- a model stored out of line (TOAST) reads back the same
CREATE TABLE big AS
SELECT svc_train(ARRAY[cos(i), sin(i), cos(2 * i), sin(3 * i), i % 7, i % 5]::float8[],
                 '{"budget": 400, "strategy": "removal"}') AS model
FROM generate_series(1, 3000) i;
SELECT length(model) > 8000 AS large, (svc_model_info(model)->>'dims')::int AS dims FROM big;

-- the training state: text output reads back, and finalises to the same model
CREATE TABLE st AS SELECT svc_train_state(f, '{"budget": 25}') AS state FROM model_pts;
SELECT svc_train_finalfn(state::text::svc_state) = (SELECT model FROM saved) AS state_text_round_trip
FROM st;
SELECT svc_train_finalfn(state) = (SELECT model FROM saved) AS state_finalises_to_model FROM st;
-- and its binary form (send/recv), as COPY BINARY and Citus use it
CREATE TABLE st_bin (state svc_state);
\copy st TO 'state_round_trip.bin' WITH (FORMAT binary)
\copy st_bin FROM 'state_round_trip.bin' WITH (FORMAT binary)
SELECT svc_train_finalfn(state) = (SELECT model FROM saved) AS state_binary_round_trip FROM st_bin;
\! rm -f model_round_trip.txt model_round_trip.bin state_round_trip.bin
