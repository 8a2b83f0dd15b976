//! What a run on clones (`dataset.kind: bird-critic` on PostgreSQL) records of its base
//! databases and of the server beyond the tables' rows (red team rounds 16 and 17): every
//! catalog row a clone's role can read, ids included, the state of every sequence, and no
//! other run's objects. The same load on a fresh server passes, a reload with other object
//! ids does not; a change of a
//! built-in's comment, a sequence moved, a large object rewritten, a sequence the reader cannot
//! read, and an object named as the run's own are each refused at start-up (exit 2), naming it.

use crate::common::servers::{self, Kind, Server};
use crate::common::{self, repo};
use crate::livesql_pg::load_databases;
use crate::livesql_pg_gate::{gated_subset, judged_query_change, sqlgate_on};

/// What the bases hold besides the corpus's tables: a sequence with a state, a table with a
/// text column stored apart (a TOAST relation, named by its table's id), comments, a view, a
/// trigger, a schema, a grant and a default privilege.
const EXTRAS: &str = "CREATE TABLE tickets (id serial PRIMARY KEY, body text); \
     SELECT setval('tickets_id_seq', 41); \
     COMMENT ON TABLE orders IS 'orders of the shop'; COMMENT ON COLUMN orders.note IS 'free text'; \
     CREATE SCHEMA archive; CREATE TABLE archive.old_orders (id int, total numeric); \
     CREATE VIEW big_orders AS SELECT id FROM orders WHERE qty > 2; \
     CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'; \
     CREATE TRIGGER touched BEFORE UPDATE ON products FOR EACH ROW EXECUTE FUNCTION touch(); \
     GRANT USAGE ON SCHEMA archive TO sqlgate_reader; \
     GRANT SELECT ON ALL TABLES IN SCHEMA archive TO sqlgate_reader; \
     GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO sqlgate_reader;";

/// Loads the corpus's databases afresh (new object ids), `shop` with [`EXTRAS`].
fn load_bases(server: &Server) {
    load_databases(server);
    server.admin_sql("shop", EXTRAS);
}

/// The gate's exit code and output on an equal pull request, `lever` (SQL as the administrator
/// on `shop`) run just before the gate, after the baseline.
fn judged_with(server: &'static Server, lever: impl FnOnce(&Server)) -> (Option<i32>, String) {
    let (code, said, _) = judged_query_change(server, |root| {
        std::fs::write(root.join("NOTES.md"), "predictions unchanged\n").unwrap();
        lever(server)
    });
    (code, said)
}

/// Asserts that `lever` (SQL as the administrator on `database`), run after the baseline on
/// fresh bases (`before` run on `shop` first), makes the gate refuse the run (exit 2) with a
/// message holding `names`; the bases are loaded afresh afterwards.
fn assert_refused(before: &str, (database, lever): (&str, &str), names: &str) {
    let server = servers::postgres();
    load_bases(server);
    if !before.is_empty() {
        server.admin_sql("shop", before);
    }
    let (code, said) = judged_with(server, |server| {
        server.admin_sql(database, lever);
    });
    load_bases(server);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains(names), "expected `{names}`: {said}");
}

#[test]
fn two_fresh_servers_loaded_alike_agree_and_a_reload_on_the_same_server_is_refused() {
    let (first, second) = (Server::start(Kind::Postgres), Server::start(Kind::Postgres));
    load_bases(&first);
    load_bases(&second);
    let (dir, base) = gated_subset(&first);
    std::fs::write(dir.path().join("NOTES.md"), "predictions unchanged\n").unwrap();
    repo::commit_all(dir.path(), "the pull request");
    let args = [&repo::EVAL[..], &["--trusted-base", &base]].concat();
    let run = sqlgate_on(&second, dir.path(), &args);
    let said = common::text(&run);
    assert_eq!(
        run.status.code(),
        Some(0),
        "the same load on a fresh server: {said}"
    );
    assert!(said.contains("gate passed"), "{said}");
    load_bases(&first);
    let run = sqlgate_on(&first, dir.path(), &args);
    let said = common::text(&run);
    assert_eq!(
        run.status.code(),
        Some(2),
        "a reload with other ids: {said}"
    );
    assert!(said.contains("`catalog pg_catalog.pg_class`"), "{said}");
}

#[test]
fn a_built_in_functions_comment_changed_is_refused() {
    let lever = ("shop", "COMMENT ON FUNCTION pg_catalog.now() IS '42'");
    assert_refused("", lever, "`catalog pg_catalog.pg_description`");
}

#[test]
fn a_sequence_moved_after_the_baseline_is_refused() {
    let lever = ("shop", "SELECT setval('tickets_id_seq', 42)");
    assert_refused("", lever, "`shop.public.tickets_id_seq` has other content");
}

#[test]
fn a_sequence_the_reader_cannot_read_is_refused_on_clones() {
    let lever = (
        "shop",
        "REVOKE SELECT ON SEQUENCE tickets_id_seq FROM sqlgate_reader",
    );
    assert_refused("", lever, "unreadable sequence tickets_id_seq");
}

#[test]
fn a_large_objects_contents_changed_after_the_baseline_are_refused() {
    let readable = "SELECT lo_from_bytea(424242, 'Oslo'); \
                    GRANT SELECT ON LARGE OBJECT 424242 TO PUBLIC";
    let lever = ("shop", "SELECT lo_put(424242, 0, 'Lyon')");
    assert_refused(readable, lever, "`large object 424242=");
}

#[test]
fn a_role_named_as_the_runs_own_is_refused() {
    let server = servers::postgres();
    let system = server.system_database();
    let _undo = Undo(
        server,
        system,
        "DROP ROLE IF EXISTS sqlgate_live_0123456789_answer",
    );
    let lever = (system, "CREATE ROLE sqlgate_live_0123456789_answer");
    assert_refused("", lever, "role sqlgate_live_0123456789_answer");
}

/// Runs its SQL as the administrator on its database when dropped, panic or not.
struct Undo(&'static Server, &'static str, &'static str);

impl Drop for Undo {
    fn drop(&mut self) {
        self.0.admin_sql(self.1, self.2);
    }
}
