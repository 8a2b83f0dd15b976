# Functions copied unchanged from BIRD mini-dev's official evaluation code, bird-bench/mini_dev at
# 21eb984c6a4c2c8952a98ece2832e15344e60d6b, evaluation/evaluation_utils.py: `execute_sql`,
# `package_sqls`, `sort_results` (and `connect_db`, which dispatches on the dialect).
# The one change: `connect_postgresql` and `connect_mysql` hard-code the BIRD authors' local
# credentials; here they connect to the server whose URL the variable BIRD_OFFICIAL_URL holds
# (the same database the test gives sqlgate). Everything else is the official text.
import json
import os
import urllib.parse

import psycopg2
import pymysql
import sqlite3


# psycopg2   2.9.9
def connect_postgresql():
    return psycopg2.connect(os.environ["BIRD_OFFICIAL_URL"])


# PyMySQL  1.1.1
def connect_mysql():
    url = urllib.parse.urlsplit(os.environ["BIRD_OFFICIAL_URL"])
    return pymysql.connect(
        host=url.hostname,
        port=url.port or 3306,
        user=urllib.parse.unquote(url.username),
        password=urllib.parse.unquote(url.password),
        database=url.path.lstrip("/"),
    )


# ---- official, unchanged ----


def connect_db(sql_dialect, db_path):
    if sql_dialect == "SQLite":
        conn = sqlite3.connect(db_path)
    elif sql_dialect == "MySQL":
        conn = connect_mysql()
    elif sql_dialect == "PostgreSQL":
        conn = connect_postgresql()
    else:
        raise ValueError("Unsupported SQL dialect")
    return conn


def execute_sql(predicted_sql, ground_truth, db_path, sql_dialect, calculate_func):
    conn = connect_db(sql_dialect, db_path)
    # Connect to the database
    cursor = conn.cursor()
    cursor.execute(predicted_sql)
    predicted_res = cursor.fetchall()
    cursor.execute(ground_truth)
    ground_truth_res = cursor.fetchall()
    conn.close()
    res = calculate_func(predicted_res, ground_truth_res)
    return res


def package_sqls(
    sql_path, db_root_path, mode="pred"
):
    clean_sqls = []
    db_path_list = []
    if mode == "pred":
        # use chain of thought
        sql_data = json.load(
            open(
                sql_path,
                "r",
            )
        )
        for _, sql_str in sql_data.items():
            if isinstance(sql_str, str):
                try:
                    sql, db_name = sql_str.split("\t----- bird -----\t")
                except ValueError:
                    sql = sql_str.strip()
                    db_name = "financial"
            else:
                sql = " "
                db_name = "financial"               
            clean_sqls.append(sql)

    elif mode == "gt":
        sqls = open(sql_path)
        sql_txt = sqls.readlines()
        for idx, sql_str in enumerate(sql_txt):
            sql, db_name = sql_str.strip().split("\t")
            clean_sqls.append(sql)
            db_path_list.append(db_root_path + db_name + "/" + db_name + ".sqlite")

    return clean_sqls, db_path_list


def sort_results(list_of_dicts):
    return sorted(list_of_dicts, key=lambda x: x["sql_idx"])
