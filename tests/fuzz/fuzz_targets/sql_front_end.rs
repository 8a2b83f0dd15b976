//! The SQL front end (Spider parser, hardness, the official text rewrites and every profile's
//! query preparation) never panics or overflows its stack on arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sqlgate::input::config::{CompareConfig, ProfileName};
use sqlgate::sql::schema::Schema;

fn schema() -> Schema {
    Schema::new(vec![
        (
            "singer".into(),
            vec!["singer_id".into(), "name".into(), "age".into()],
        ),
        (
            "concert".into(),
            vec!["concert_id".into(), "singer_id".into(), "name".into()],
        ),
    ])
}

fuzz_target!(|sql: &str| {
    if let Ok(parsed) = sqlgate::sql::parse::parse_spider(sql, &schema()) {
        let _ = sqlgate::sql::hardness::hardness(&parsed);
    }
    let _ = sqlgate::sql::text::remove_distinct(sql);
    let _ = sqlgate::sql::text::replace_cur_year(sql);
    for profile in [ProfileName::SpiderTs, ProfileName::Bird, ProfileName::Strict] {
        let compare = CompareConfig {
            profile,
            ..CompareConfig::default()
        };
        let prepared = sqlgate::engine::profile::Profile::new(&compare);
        let _ = prepared.prepare_gold(sql);
        let _ = prepared.prepare_prediction(sql);
    }
});
