//! `flexiq jobs` and `flexiq dlq` on a seeded store.

use crate::fixture::seeded;

#[tokio::test]
async fn jobs_list_walks_keyset_pages_and_filters() {
    let s = seeded().await;
    let human = s.run(&["jobs", "list", "--limit", "4"]).ok();
    assert!(human.stdout.contains("next page: --after "), "{}", human.stdout);
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut args = vec!["jobs", "list", "--limit", "4", "--json"];
        if let Some(c) = &after {
            args.extend(["--after", c.as_str()]);
        }
        let page = s.run(&args).ok().json();
        for j in page["items"].as_array().unwrap() {
            seen.push(j["id"].as_str().unwrap().to_string());
        }
        match page["next_cursor"].as_str() {
            Some(c) => after = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 9, "every job once: {seen:?}");
    let mut dedup = seen.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), 9);

    let dead = s.run(&["jobs", "list", "--status", "dead", "--json"]).ok().json();
    let items = dead["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["id"], s.dead.as_str());
    assert_eq!(items[0]["payload"], "{}");
    let later = s.run(&["jobs", "list", "--queue", "later", "--task", "later.run", "--json"]).ok().json();
    assert_eq!(later["items"].as_array().unwrap().len(), 3);
    assert!(later["next_cursor"].is_null());
}

#[tokio::test]
async fn jobs_show_prints_fields_errors_and_json() {
    let s = seeded().await;
    let human = s.run(&["jobs", "show", &s.dead]).ok();
    for needle in [s.dead.as_str(), "mail.bounce", "dead", "failed attempts", "mailbox full"] {
        assert!(human.stdout.contains(needle), "missing {needle:?}:\n{}", human.stdout);
    }
    let v = s.run(&["jobs", "show", &s.completed[0], "--json"]).ok().json();
    assert_eq!(v["job"]["id"], s.completed[0].as_str());
    assert_eq!(v["job"]["status"], "completed");
    assert_eq!(v["job"]["result"], "sent");
    assert_eq!(v["errors"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn dlq_list_retry_delete_and_purge() {
    let s = seeded().await;
    let human = s.run(&["dlq", "list"]).ok();
    assert!(
        human.stdout.contains("mail.bounce") && human.stdout.contains("mailbox full"),
        "{}",
        human.stdout
    );
    let page = s.run(&["dlq", "list", "--json"]).ok().json();
    let entries = page["items"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["original_job_id"], s.dead.as_str());
    let by_task = s.run(&["dlq", "list", "--task", "mail.bounce", "--json"]).ok().json();
    assert_eq!(by_task["items"].as_array().unwrap().len(), 1);
    let dead_id = entries[0]["id"].as_str().unwrap().to_string();

    let retried = s.run(&["dlq", "retry", &dead_id, "--json"]).ok().json();
    let new_job = retried["job_id"].as_str().unwrap().to_string();
    let job = s.run(&["jobs", "show", &new_job, "--json"]).ok().json();
    assert_eq!(job["job"]["status"], "pending");
    assert_eq!(job["job"]["task"], "mail.bounce");
    s.run(&["dlq", "retry", &dead_id]).fails(3, &dead_id);

    // Make three more dead letters to delete and purge.
    let q = s.queue().await;
    for _ in 0..3 {
        let opts =
            flexiq::EnqueueOptions { queue: Some("dl".into()), max_retries: Some(0), ..Default::default() };
        q.enqueue("dl.fail", b"x".to_vec(), opts).await.unwrap();
        let id = crate::fixture::claim_one(&q, "dl").await;
        let job = q.get_job(&id).await.unwrap().unwrap();
        let ack = flexiq::core::store::Ack {
            job_id: job.id.clone(),
            fence: job.fence().unwrap(),
            kind: flexiq::core::store::AckKind::Fail { error: "nope".into(), retryable: true },
        };
        q.store().ack(flexiq::core::store::AckRequest { acks: vec![ack], now: q.now_ms() }).await.unwrap();
    }
    let page = s.run(&["dlq", "list", "--limit", "2", "--json"]).ok().json();
    let cursor = page["next_cursor"].as_str().expect("a second page").to_string();
    let rest = s.run(&["dlq", "list", "--limit", "2", "--after", &cursor, "--json"]).ok().json();
    assert_eq!(rest["items"].as_array().unwrap().len(), 1);
    let one = page["items"][0]["id"].as_str().unwrap().to_string();
    assert!(s.run(&["dlq", "delete", &one]).ok().stdout.contains("deleted"));
    assert_eq!(s.run(&["dlq", "purge", "--older-than", "3600", "--json"]).ok().json()["deleted"], 0);
    assert_eq!(s.run(&["dlq", "purge", "--task", "dl.fail", "--json"]).ok().json()["deleted"], 2);
    assert!(s.run(&["dlq", "list"]).ok().stdout.contains("0 dead letters"));
    q.close().await.unwrap();
}
