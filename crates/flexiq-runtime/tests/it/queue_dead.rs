//! The dead-letter queue.

use crate::assert_code;
use crate::common::{make_dead, manual, open};

const UNKNOWN: &str = "0190aaaa-0000-7000-8000-000000000000";

#[tokio::test]
async fn dead_letters_lists_newest_first_with_offset() {
    let q = open().await;
    let first = make_dead(&q, "a").await;
    let second = make_dead(&q, "b").await;
    let dead = q.dead_letters(10, 0).await.unwrap();
    assert_eq!(dead.len(), 2);
    assert_eq!(dead[0].original_job_id, second.as_str());
    assert_eq!(dead[1].original_job_id, first.as_str());
    assert_eq!(dead[1].error.as_deref(), Some("a broke"));
    assert_eq!(q.dead_letters(10, 1).await.unwrap().len(), 1);
    assert_code!(q.dead_letters(0, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.dead_letters(10, -2).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn dead_letters_by_task_narrows_to_one_task() {
    let q = open().await;
    make_dead(&q, "a").await;
    make_dead(&q, "b").await;
    make_dead(&q, "a").await;
    assert_eq!(q.dead_letters_by_task("a", 10, 0).await.unwrap().len(), 2);
    assert_eq!(q.dead_letters_by_task("zzz", 10, 0).await.unwrap().len(), 0);
    assert_code!(q.dead_letters_by_task("", 10, 0).await, "INVALID_ARGUMENT");
    assert_code!(q.dead_letters_by_task("a", 100_000, 0).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn dead_letters_after_pages_by_cursor() {
    let q = open().await;
    for _ in 0..3 {
        make_dead(&q, "a").await;
    }
    let page = q.dead_letters_after(2, None).await.unwrap();
    assert_eq!(page.items.len(), 2);
    let rest = q.dead_letters_after(2, page.next_cursor.as_deref()).await.unwrap();
    assert_eq!(rest.items.len(), 1);
    assert!(rest.next_cursor.is_none());
    assert_code!(q.dead_letters_after(2, Some("not a cursor")).await, "INVALID_ARGUMENT");
    assert_code!(q.dead_letters_after(-1, None).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn retry_dead_reenqueues_and_removes_the_entry() {
    let q = open().await;
    make_dead(&q, "a").await;
    let entry = q.dead_letters(1, 0).await.unwrap().remove(0);
    let new_id = q.retry_dead(&entry.id).await.unwrap();
    assert_eq!(q.get_job(new_id.as_str()).await.unwrap().unwrap().task, "a");
    assert!(q.dead_letters(10, 0).await.unwrap().is_empty());
    assert_code!(q.retry_dead(&entry.id).await, "NOT_FOUND");
    assert_code!(q.retry_dead("nope").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn delete_dead_discards_one_entry() {
    let q = open().await;
    make_dead(&q, "a").await;
    let entry = q.dead_letters(1, 0).await.unwrap().remove(0);
    assert!(q.delete_dead(&entry.id).await.unwrap());
    assert!(!q.delete_dead(&entry.id).await.unwrap());
    assert!(!q.delete_dead(UNKNOWN).await.unwrap());
    assert_code!(q.delete_dead("x").await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn purge_dead_removes_entries_older_than_the_window() {
    let q = open().await;
    let (q, clock) = manual(&q);
    make_dead(&q, "a").await;
    clock.advance(10_000);
    make_dead(&q, "b").await;
    clock.advance(1_000);
    assert_eq!(q.purge_dead(5).await.unwrap(), 1);
    assert_eq!(q.dead_letters(10, 0).await.unwrap()[0].task_name, "b");
    assert_eq!(q.purge_dead(0).await.unwrap(), 1);
    assert_code!(q.purge_dead(-1).await, "INVALID_ARGUMENT");
}

#[tokio::test]
async fn purge_dead_by_task_drops_one_task() {
    let q = open().await;
    make_dead(&q, "a").await;
    make_dead(&q, "a").await;
    make_dead(&q, "b").await;
    assert_eq!(q.purge_dead_by_task("a").await.unwrap(), 2);
    assert_eq!(q.dead_letters(10, 0).await.unwrap().len(), 1);
    assert_code!(q.purge_dead_by_task("").await, "INVALID_ARGUMENT");
}
