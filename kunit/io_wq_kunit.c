// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for io-wq's hand-off of queued work: the states a race
 * leaves behind, built by hand, so that the outcome does not depend on
 * timing. Each case sets up an io_wq with work queued, a worker that is
 * about to sleep or asks for help, and idle workers on the free list,
 * then calls the function the scheduler hook or the task_work would call
 * and looks at which idle worker was woken.
 *
 * The idle workers are kernel threads asleep in TASK_INTERRUPTIBLE, as an
 * idle io-wq worker sleeps; once woken they never sleep that way again,
 * so "is it still in TASK_INTERRUPTIBLE?" says whether anything woke it.
 *
 * Included at the end of io_uring/io-wq.c to reach its static functions.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>

enum { IO_WQ_TEST_IDLE_WORKERS = 2 };

struct io_wq_test_fixture {
	struct io_wq wq;
	struct io_wq_acct *acct;
	struct io_wq_work work;
	/* workers that sleep in other work or ask for one: current */
	struct io_worker busy[2];
	struct io_worker idle[IO_WQ_TEST_IDLE_WORKERS];
};

/* Sleep, never in TASK_INTERRUPTIBLE, until kthread_stop(). */
static int io_wq_test_wait_for_stop(void)
{
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* An idle worker's sleep: the first wake ends it for good. */
static int io_wq_test_idle_thread(void *data)
{
	set_current_state(TASK_INTERRUPTIBLE);
	if (!kthread_should_stop())
		schedule();
	return io_wq_test_wait_for_stop();
}

static bool io_wq_test_woken(struct io_worker *worker)
{
	return READ_ONCE(worker->task->__state) != TASK_INTERRUPTIBLE;
}

static void io_wq_test_worker_init(struct io_wq_test_fixture *fx,
				   struct io_worker *worker,
				   struct task_struct *task)
{
	refcount_set(&worker->ref, 1);
	init_completion(&worker->ref_done);
	worker->wq = &fx->wq;
	worker->task = task;
	/* unbound: io_wq_get_acct() gives acct[IO_WQ_ACCT_UNBOUND] */
	set_bit(IO_WORKER_F_UP, &worker->flags);
	set_bit(IO_WORKER_F_RUNNING, &worker->flags);
}

/* Free list heads are added last: io_wq_activate_free_worker() starts there. */
static void io_wq_test_make_free(struct io_wq_test_fixture *fx,
				 struct io_worker *worker)
{
	set_bit(IO_WORKER_F_FREE, &worker->flags);
	hlist_nulls_add_head_rcu(&worker->nulls_node, &fx->wq.free_list);
}

static int io_wq_test_init(struct kunit *test)
{
	struct io_wq_test_fixture *fx;
	int i, tries;

	fx = kunit_kzalloc(test, sizeof(*fx), GFP_KERNEL);
	if (!fx)
		return -ENOMEM;
	/* set first: the exit hook stops whatever threads were started */
	test->priv = fx;
	raw_spin_lock_init(&fx->wq.lock);
	INIT_HLIST_NULLS_HEAD(&fx->wq.free_list, 0);
	INIT_LIST_HEAD(&fx->wq.all_list);
	init_completion(&fx->wq.worker_done);
	/* one reference for the wq itself, as io_wq_create() takes */
	atomic_set(&fx->wq.worker_refs, 1);
	fx->wq.task = current;
	fx->acct = &fx->wq.acct[IO_WQ_ACCT_UNBOUND];
	fx->acct->index = IO_WQ_ACCT_UNBOUND;
	raw_spin_lock_init(&fx->acct->lock);
	INIT_WQ_LIST(&fx->acct->work_list);
	for (i = 0; i < ARRAY_SIZE(fx->busy); i++)
		io_wq_test_worker_init(fx, &fx->busy[i], current);

	for (i = 0; i < IO_WQ_TEST_IDLE_WORKERS; i++) {
		struct task_struct *task;

		task = kthread_run(io_wq_test_idle_thread, NULL,
				   "iowq-kunit-idle%d", i);
		if (IS_ERR(task))
			return PTR_ERR(task);
		get_task_struct(task);
		io_wq_test_worker_init(fx, &fx->idle[i], task);
		/* off the CPU and asleep, as an idle worker in schedule_timeout() */
		for (tries = 0; !wait_task_inactive(task, TASK_INTERRUPTIBLE); tries++) {
			if (tries == 1000)
				return -ETIMEDOUT;
			usleep_range(1000, 2000);
		}
	}
	/*
	 * Four workers (the two busy, the two idle), the unbound limit: a
	 * request for one more cannot create it.
	 */
	fx->acct->nr_workers = 4;
	fx->acct->max_workers = 4;
	return 0;
}

static void io_wq_test_exit(struct kunit *test)
{
	struct io_wq_test_fixture *fx = test->priv;
	int i;

	if (!fx)
		return;
	for (i = 0; i < IO_WQ_TEST_IDLE_WORKERS; i++) {
		if (!fx->idle[i].task)
			continue;
		kthread_stop(fx->idle[i].task);
		put_task_struct(fx->idle[i].task);
	}
}

static void io_wq_test_queue_work(struct io_wq_test_fixture *fx)
{
	atomic_set(&fx->work.flags, IO_WQ_WORK_UNBOUND);
	raw_spin_lock(&fx->acct->lock);
	wq_list_add_tail(&fx->work.list, &fx->acct->work_list);
	raw_spin_unlock(&fx->acct->lock);
}

/*
 * Work queued while the worker it woke (or found running) was still on the
 * free list counted on that worker; the worker took other work, which now
 * blocks. Another worker still runs, so 6.12 asks for nobody: the work
 * waits until a busy worker finishes. An idle worker must take it.
 */
static void io_wq_blocking_worker_wakes_idle_test(struct kunit *test)
{
	struct io_wq_test_fixture *fx = test->priv;

	io_wq_test_make_free(fx, &fx->idle[0]);
	io_wq_test_queue_work(fx);
	atomic_set(&fx->acct->nr_running, 2);

	io_wq_dec_running(&fx->busy[0]);

	KUNIT_EXPECT_EQ(test, atomic_read(&fx->acct->nr_running), 1);
	KUNIT_EXPECT_TRUE_MSG(test, io_wq_test_woken(&fx->idle[0]),
			      "work queued, a worker blocked, the idle worker left asleep");
}

/*
 * The worker that blocks is itself on the free list (it blocked in its idle
 * path, say in the last fput() of a pipe run from task_work) and heads it.
 * It is running, so waking it wakes nobody: the idle worker behind it must
 * be woken instead.
 */
static void io_wq_blocking_free_worker_not_itself_test(struct kunit *test)
{
	struct io_wq_test_fixture *fx = test->priv;

	io_wq_test_make_free(fx, &fx->idle[0]);
	io_wq_test_make_free(fx, &fx->busy[0]);
	io_wq_test_queue_work(fx);
	atomic_set(&fx->acct->nr_running, 2);

	io_wq_dec_running(&fx->busy[0]);

	KUNIT_EXPECT_TRUE_MSG(test, io_wq_test_woken(&fx->idle[0]),
			      "the blocking worker woke itself, not the idle one");
}

struct io_wq_test_blocker {
	struct io_worker *worker;
	atomic_t done;
};

/* A worker's sleep hook, run from another thread while the test holds a lock. */
static int io_wq_test_block_thread(void *data)
{
	struct io_wq_test_blocker *blocker = data;

	io_wq_dec_running(blocker->worker);
	atomic_set(&blocker->done, 1);
	return io_wq_test_wait_for_stop();
}

/*
 * Nothing queued: a worker that blocks wakes nobody, and takes no lock on
 * its way to sleep (the hook runs for every worker that blocks). The hook
 * runs on another CPU while this one holds acct->lock: it must return all
 * the same.
 */
static void io_wq_blocking_worker_nothing_queued_test(struct kunit *test)
{
	struct io_wq_test_fixture *fx = test->priv;
	struct io_wq_test_blocker blocker = { .worker = &fx->busy[0] };
	struct task_struct *task;
	int waited_ms;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs a second CPU to run the sleep hook on");
	io_wq_test_make_free(fx, &fx->idle[0]);
	atomic_set(&fx->acct->nr_running, 2);
	task = kthread_create(io_wq_test_block_thread, &blocker, "iowq-kunit-block");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);

	/* on another CPU than this one, which will spin with the lock held */
	migrate_disable();
	kthread_bind(task, cpumask_any_but(cpu_online_mask, raw_smp_processor_id()));
	raw_spin_lock(&fx->acct->lock);
	wake_up_process(task);
	for (waited_ms = 0; !atomic_read(&blocker.done) && waited_ms < 1000; waited_ms++)
		mdelay(1);
	raw_spin_unlock(&fx->acct->lock);
	migrate_enable();
	kthread_stop(task);
	put_task_struct(task);

	KUNIT_EXPECT_LT_MSG(test, waited_ms, 1000,
			    "the sleep hook waited for acct->lock with nothing queued");
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->acct->nr_running), 1);
	KUNIT_EXPECT_FALSE_MSG(test, io_wq_test_woken(&fx->idle[0]),
			       "an idle worker woken with no work queued");
}

/*
 * Two workers block one after the other with one item queued: the first
 * wakes the head of the free list, the second finds it woken (running) and
 * counts on it. One idle worker is woken for the one item, not two.
 */
static void io_wq_blocking_workers_wake_one_test(struct kunit *test)
{
	struct io_wq_test_fixture *fx = test->priv;

	io_wq_test_make_free(fx, &fx->idle[1]);
	io_wq_test_make_free(fx, &fx->idle[0]);
	io_wq_test_queue_work(fx);
	atomic_set(&fx->acct->nr_running, 3);

	io_wq_dec_running(&fx->busy[0]);
	io_wq_dec_running(&fx->busy[1]);

	KUNIT_EXPECT_EQ(test, atomic_read(&fx->acct->nr_running), 1);
	KUNIT_EXPECT_TRUE_MSG(test, io_wq_test_woken(&fx->idle[0]),
			      "work queued, two workers blocked, no idle worker woken");
	KUNIT_EXPECT_FALSE_MSG(test, io_wq_test_woken(&fx->idle[1]),
			       "two idle workers woken for one queued item");
}

/*
 * The last running worker blocked with work queued and asked for a new
 * worker; the request runs (as task_work of the ring's task) when the
 * unbound workers are at their limit, so none can be created. 6.12 drops
 * the request and the work waits for a busy worker. An idle worker (one
 * that was going to sleep when the request was made) must take it, not
 * the worker that asked, which heads the free list here: it blocked in
 * its idle path.
 */
static void io_wq_create_at_max_wakes_idle_test(struct kunit *test)
{
	struct io_wq_test_fixture *fx = test->priv;
	struct io_worker *asker = &fx->busy[0];

	io_wq_test_make_free(fx, &fx->idle[0]);
	io_wq_test_make_free(fx, asker);
	io_wq_test_queue_work(fx);
	/* what io_wq_dec_running() leaves for create_worker_cb() */
	atomic_set(&fx->acct->nr_running, 1);
	atomic_inc(&fx->wq.worker_refs);
	refcount_inc(&asker->ref);
	set_bit(0, &asker->create_state);
	asker->create_index = IO_WQ_ACCT_UNBOUND;

	create_worker_cb(&asker->create_work);

	KUNIT_EXPECT_EQ(test, fx->acct->nr_workers, 4U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->acct->nr_running), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->wq.worker_refs), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&asker->ref), 1);
	KUNIT_EXPECT_FALSE(test, test_bit(0, &asker->create_state));
	KUNIT_EXPECT_TRUE_MSG(test, io_wq_test_woken(&fx->idle[0]),
			      "no worker could be created and the idle one was left asleep");
}

static struct kunit_case io_wq_test_cases[] = {
	KUNIT_CASE(io_wq_blocking_worker_wakes_idle_test),
	KUNIT_CASE(io_wq_blocking_free_worker_not_itself_test),
	KUNIT_CASE(io_wq_blocking_worker_nothing_queued_test),
	KUNIT_CASE(io_wq_blocking_workers_wake_one_test),
	KUNIT_CASE(io_wq_create_at_max_wakes_idle_test),
	{}
};

static struct kunit_suite io_wq_test_suite = {
	.name = "io_uring_io_wq",
	.init = io_wq_test_init,
	.exit = io_wq_test_exit,
	.test_cases = io_wq_test_cases,
};

kunit_test_suite(io_wq_test_suite);
