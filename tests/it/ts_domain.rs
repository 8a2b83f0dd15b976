//! Test-suite verdicts on real Spider items, over a suite of the item's original database and
//! one variant of it: the facts the verdict learns from the original data across rows and
//! tables. A tie at a LIMIT cut is seen even when its first two rows project the same values
//! (employee_hire_evaluation); a car model paired with another maker than in the original is
//! data the domain never has (car_1); a functional dependency of the original (every country of
//! a region is on one continent) holds on the data that decides, and a difference that survives
//! restoring it still decides (world_1); a car under a model its make never has, whose own
//! model the shrunk data lacks, is data the domain never has either (car_1).

use crate::common;

use common::shared_spider;

/// The item's JSONL record for `gold` and `prediction` on the shared Spider `db_id` and one
/// variant of it made by `change` ([`common::judged_on_variant`]).
fn judged_on_variant(db_id: &str, change: &str, gold: &str, prediction: &str) -> serde_json::Value {
    common::judged_on_variant(
        &shared_spider().join("database"),
        db_id,
        change,
        gold,
        prediction,
    )
}

/// The reasons the verdict gave for setting the variant aside (none when it decided).
fn set_aside(item: &serde_json::Value) -> String {
    item["ts_components"]["set_aside"]
        .as_array()
        .map(|reasons| {
            reasons
                .iter()
                .filter_map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        })
        .unwrap_or_default()
}

#[test]
fn a_three_way_tie_whose_first_rows_agree_leaves_the_gold_undetermined() {
    // Spider dev #279 (C3): the highest bonus goes to George Chuter twice and to Lee Mears
    // once. The gold's LIMIT 1 may answer either; rows 1 and 2 of its sort are both Chuter's.
    let item = judged_on_variant(
        "employee_hire_evaluation",
        "INSERT INTO evaluation VALUES ('1', '2019', 9000.0), ('1', '2020', 9000.0), \
         ('2', '2019', 9000.0);",
        "SELECT t1.name FROM employee AS t1 JOIN evaluation AS t2 ON t1.Employee_ID  =  \
         t2.Employee_ID ORDER BY t2.bonus DESC LIMIT 1",
        "SELECT employee.name FROM employee JOIN evaluation ON employee.employee_id = \
         evaluation.employee_id WHERE evaluation.bonus = (SELECT MAX(bonus) FROM evaluation);",
    );
    assert_eq!(item["metrics"]["ex"], 1, "{item}");
    assert_eq!(item["metrics"]["ts"], 1, "{item}");
}

const VOLVO_GOLD: &str = "SELECT avg(T2.edispl) FROM CAR_NAMES AS T1 JOIN CARS_DATA AS T2 ON \
                          T1.MakeId  =  T2.Id WHERE T1.Model  =  'volvo';";
/// GPT-4 Turbo's prediction for Spider dev #138, judged right (the model `volvo` is Volvo's).
const VOLVO_BY_MAKER: &str = "SELECT AVG(cars_data.Edispl) FROM cars_data JOIN car_names ON \
     cars_data.Id = car_names.MakeId JOIN model_list ON car_names.Model = model_list.Model JOIN \
     car_makers ON model_list.Maker = car_makers.Id WHERE car_makers.Maker = 'volvo';";

#[test]
fn a_model_made_by_another_maker_than_in_the_original_is_set_aside() {
    let item = judged_on_variant(
        "car_1",
        "UPDATE model_list SET Maker = (SELECT Id FROM car_makers WHERE Maker = 'renault') \
         WHERE Model = 'volvo';",
        VOLVO_GOLD,
        VOLVO_BY_MAKER,
    );
    assert_eq!(item["metrics"]["ex"], 1, "{item}");
    assert_eq!(item["metrics"]["ts"], 1, "{item}");
    let reasons = set_aside(&item);
    assert!(
        reasons.contains(
            "model_list Model 'volvo' belongs to car_makers Maker 'renault', but in the original \
             data its partner is 'volvo'"
        ),
        "{reasons}"
    );
}

#[test]
fn a_difference_beside_a_broken_model_pairing_still_decides() {
    // The same broken pairing, and a new Volvo car whose make name does not say `volvo`'s
    // model: counting by maker and by model differ whoever makes the `volvo` model.
    let item = judged_on_variant(
        "car_1",
        "UPDATE model_list SET Maker = (SELECT Id FROM car_makers WHERE Maker = 'renault') \
         WHERE Model = 'volvo';
         INSERT INTO model_list VALUES (999, (SELECT Id FROM car_makers WHERE Maker = 'volvo'), \
         'volvo-x');
         INSERT INTO car_names VALUES (999, 'volvo-x', 'volvo-x 1');
         INSERT INTO cars_data VALUES (999, '20', 4, 900.0, '90', 2500, 15.0, 1980);",
        VOLVO_GOLD,
        VOLVO_BY_MAKER,
    );
    assert_eq!(item["metrics"]["ex"], 1, "{item}");
    assert_eq!(item["metrics"]["ts"], 0, "{item}");
    assert_eq!(
        item["ts_components"]["distinguishing_database"], "car_1_1.sqlite",
        "{item}"
    );
}

/// Spider dev #719's gold; the prediction adds the continent every Central African country
/// is on, which the original data determines from the region.
const CENTRAL_AFRICA_GOLD: &str =
    "SELECT avg(LifeExpectancy) FROM country WHERE Region  =  \"Central Africa\"";
const WITH_CONTINENT: &str = "SELECT avg(LifeExpectancy) FROM country WHERE Region = \
     'Central Africa' AND Continent = 'Africa'";

#[test]
fn a_region_moved_to_another_continent_is_set_aside() {
    let item = judged_on_variant(
        "world_1",
        "UPDATE country SET Continent = 'Europe' WHERE Code = 'GAB';",
        CENTRAL_AFRICA_GOLD,
        WITH_CONTINENT,
    );
    assert_eq!(item["metrics"]["ex"], 1, "{item}");
    assert_eq!(item["metrics"]["ts"], 1, "{item}");
    let reasons = set_aside(&item);
    assert!(
        reasons.contains(
            "country has Region 'Central Africa' with Continent 'Europe', but in the original \
             data every Region 'Central Africa' has Continent 'Africa'"
        ),
        "{reasons}"
    );
}

#[test]
fn a_difference_that_survives_restoring_the_continent_decides() {
    // A prediction that also drops countries without a capital: restoring Gabon's continent
    // leaves Chad, whose capital is gone, counted by the gold alone.
    let item = judged_on_variant(
        "world_1",
        "UPDATE country SET Continent = 'Europe' WHERE Code = 'GAB';
         UPDATE country SET Capital = NULL WHERE Code = 'TCD';",
        CENTRAL_AFRICA_GOLD,
        "SELECT avg(LifeExpectancy) FROM country WHERE Region = 'Central Africa' AND \
         Continent = 'Africa' AND Capital IS NOT NULL",
    );
    assert_eq!(item["metrics"]["ex"], 1, "{item}");
    assert_eq!(item["metrics"]["ts"], 0, "{item}");
}

/// Spider dev #111's gold; the prediction also asks that the car's model be made by `amc`,
/// which in the original data every car named `amc hornet sportabout (sw)` is.
const HORNET_GOLD: &str = "SELECT T1.Accelerate FROM CARS_DATA AS T1 JOIN CAR_NAMES AS T2 ON \
     T1.Id  =  T2.MakeId WHERE T2.Make  =  'amc hornet sportabout (sw)'";
const HORNET_BY_MAKER: &str = "SELECT cars_data.accelerate FROM cars_data JOIN car_names ON \
     cars_data.id = car_names.makeid JOIN model_list ON car_names.model = model_list.model JOIN \
     car_makers ON model_list.maker = car_makers.id WHERE car_makers.maker = 'amc' AND \
     car_names.make = 'amc hornet sportabout (sw)'";

#[test]
fn a_car_under_a_model_its_make_never_has_is_set_aside_even_without_that_model() {
    // The car moves to the `fiat` model (C3 #111): restoring its model `amc` in place would
    // name a model the shrunk data lacks, so the row is removed instead.
    let item = judged_on_variant(
        "car_1",
        "UPDATE car_names SET Model = 'fiat' WHERE Make = 'amc hornet sportabout (sw)';",
        HORNET_GOLD,
        HORNET_BY_MAKER,
    );
    assert_eq!(item["metrics"]["ex"], 1, "{item}");
    assert_eq!(item["metrics"]["ts"], 1, "{item}");
    let reasons = set_aside(&item);
    assert!(
        reasons.contains(
            "car_names has Make 'amc hornet sportabout (sw)' with Model 'fiat', but in the \
             original data every Make 'amc hornet sportabout (sw)' has Model 'amc', a parent \
             the data lacks"
        ),
        "{reasons}"
    );
}
