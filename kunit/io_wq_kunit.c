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
 * idle io-wq worker sleeps in its idle wait; once woken they never sleep
 * that way again, so "is it still in TASK_INTERRUPTIBLE?" says whether
 * anything woke it. The blocked ones are free workers asleep elsewhere (in
 * task_work of their idle path, say waiting for a pipe mutex): kernel
 * threads in TASK_UNINTERRUPTIBLE, likewise only until the first wake.
 *
 * Included at the end of io_uring/io-wq.c to reach its static functions.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>

enum { IO_WQ_TEST_IDLE_WORKERS = 2, IO_WQ_TEST_BLOCKED_WORKERS = 2 };

struct io_wq_test_fixture {
	struct io_wq wq;
	struct io_wq_acct *acct;
	struct io_wq_work work;
	/* workers that sleep in other work or ask for one: current */
	struct io_worker busy[2];
	struct io_worker idle[IO_WQ_TEST_IDLE_WORKERS];
	/* on the free list, asleep outside the idle wait */
	struct io_worker blocked[IO_WQ_TEST_BLOCKED_WORKERS];
};

/* Sleep in @state until kthread_stop(). */
static int io_wq_test_wait_for_stop(unsigned int state)
{
	for (;;) {
		set_current_state(state);
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
	return io_wq_test_wait_for_stop(TASK_UNINTERRUPTIBLE);
}

/* A free worker blocked elsewhere; after a wake, it sleeps killable. */
static int io_wq_test_blocked_thread(void *data)
{
	set_current_state(TASK_UNINTERRUPTIBLE);
	if (!kthread_should_stop())
		schedule();
	return io_wq_test_wait_for_stop(TASK_KILLABLE);
}

static bool io_wq_test_woken(struct io_worker *worker)
{
	return READ_ONCE(worker->task->__state) != TASK_INTERRUPTIBLE;
}

static bool io_wq_test_blocked_woken(struct io_worker *worker)
{
	return READ_ONCE(worker->task->__state) != TASK_UNINTERRUPTIBLE;
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
	/* a worker asleep is not RUNNING: the sleep hook cleared it */
	if (task == current)
		set_bit(IO_WORKER_F_RUNNING, &worker->flags);
}

/* What the scheduler's sleep hook does when a running worker blocks. */
static void io_wq_test_block(struct io_worker *worker)
{
	clear_bit(IO_WORKER_F_RUNNING, &worker->flags);
	io_wq_dec_running(worker);
}

/* A kernel thread asleep in @state, as the worker @worker. */
static int io_wq_test_start_sleeper(struct io_wq_test_fixture *fx,
				    struct io_worker *worker,
				    int (*fn)(void *), unsigned int state,
				    const char *name, int i)
{
	struct task_struct *task;
	int tries;

	task = kthread_run(fn, NULL, "iowq-kunit-%s%d", name, i);
	if (IS_ERR(task))
		return PTR_ERR(task);
	get_task_struct(task);
	io_wq_test_worker_init(fx, worker, task);
	/* off the CPU and asleep */
	for (tries = 0; !wait_task_inactive(task, state); tries++) {
		if (tries == 1000)
			return -ETIMEDOUT;
		usleep_range(1000, 2000);
	}
	return 0;
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
	int i, ret;

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
		/* as an idle worker in schedule_timeout(WORKER_IDLE_TIMEOUT) */
		ret = io_wq_test_start_sleeper(fx, &fx->idle[i],
					       io_wq_test_idle_thread,
					       TASK_INTERRUPTIBLE, "idle", i);
		if (ret)
			return ret;
		set_bit(IO_WORKER_F_IDLE_WAIT, &fx->idle[i].flags);
	}
	for (i = 0; i < IO_WQ_TEST_BLOCKED_WORKERS; i++) {
		ret = io_wq_test_start_sleeper(fx, &fx->blocked[i],
					       io_wq_test_blocked_thread,
					       TASK_UNINTERRUPTIBLE, "blocked", i);
		if (ret)
			return ret;
	}
	/*
	 * Six workers (two busy, two idle, two blocked), the unbound limit:
	 * a request for one more cannot create it.
	 */
	fx->acct->nr_workers = 6;
	fx->acct->max_workers = 6;
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
	for (i = 0; i < IO_WQ_TEST_BLOCKED_WORKERS; i++) {
		if (!fx->blocked[i].task)
			continue;
		kthread_stop(fx->blocked[i].task);
		put_task_struct(fx->blocked[i].task);
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

	io_wq_test_block(&fx->busy[0]);

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

	io_wq_test_block(&fx->busy[0]);

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

	io_wq_test_block(blocker->worker);
	atomic_set(&blocker->done, 1);
	return io_wq_test_wait_for_stop(TASK_UNINTERRUPTIBLE);
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

	io_wq_test_block(&fx->busy[0]);
	io_wq_test_block(&fx->busy[1]);

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
	clear_bit(IO_WORKER_F_RUNNING, &asker->flags);
	atomic_set(&fx->acct->nr_running, 1);
	atomic_inc(&fx->wq.worker_refs);
	refcount_inc(&asker->ref);
	set_bit(0, &asker->create_state);
	asker->create_index = IO_WQ_ACCT_UNBOUND;

	create_worker_cb(&asker->create_work);

	KUNIT_EXPECT_EQ(test, fx->acct->nr_workers, 6U);
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->acct->nr_running), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&fx->wq.worker_refs), 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&asker->ref), 1);
	KUNIT_EXPECT_FALSE(test, test_bit(0, &asker->create_state));
	KUNIT_EXPECT_TRUE_MSG(test, io_wq_test_woken(&fx->idle[0]),
			      "no worker could be created and the idle one was left asleep");
}

/*
 * Two free workers head the free list asleep outside their idle wait (in
 * task_work of their idle path, say the last fput() of a pipe waiting for
 * the pipe mutex); an idle worker is behind them. A worker that blocks
 * with work queued must wake the idle one and leave the blocked ones
 * asleep: woken, one would only block again, and each such block would
 * hand the work to the other, back and forth for as long as any worker
 * runs. Then one of the blocked workers does run, briefly, and blocks
 * again: the other is still not woken.
 */
static void io_wq_blocked_free_workers_passed_by_test(struct kunit *test)
{
	struct io_wq_test_fixture *fx = test->priv;
	struct io_worker *b0 = &fx->blocked[0], *b1 = &fx->blocked[1];

	io_wq_test_make_free(fx, &fx->idle[0]);
	io_wq_test_make_free(fx, b0);
	io_wq_test_make_free(fx, b1);
	io_wq_test_queue_work(fx);
	atomic_set(&fx->acct->nr_running, 2);

	io_wq_test_block(&fx->busy[0]);

	KUNIT_EXPECT_TRUE_MSG(test, io_wq_test_woken(&fx->idle[0]),
			      "work queued, a worker blocked, the idle worker behind two blocked ones left asleep");
	KUNIT_EXPECT_FALSE_MSG(test, io_wq_test_blocked_woken(b1),
			       "a free worker blocked outside its idle wait was woken");
	KUNIT_EXPECT_FALSE_MSG(test, io_wq_test_blocked_woken(b0),
			       "a free worker blocked outside its idle wait was woken");

	/* b0 runs for a moment (its sleep hook's counterpart), then blocks */
	set_bit(IO_WORKER_F_RUNNING, &b0->flags);
	atomic_inc(&fx->acct->nr_running);
	io_wq_test_block(b0);

	KUNIT_EXPECT_FALSE_MSG(test, io_wq_test_blocked_woken(b1),
			       "a blocked free worker re-blocking handed the work to another blocked one");
}

/*
 * The free list holds only workers asleep outside their idle wait: none
 * can take new work, so io_wq_enqueue() must be told to create one, and
 * none of them woken.
 */
static void io_wq_enqueue_no_idle_worker_test(struct kunit *test)
{
	struct io_wq_test_fixture *fx = test->priv;
	bool woken;

	io_wq_test_make_free(fx, &fx->blocked[0]);
	io_wq_test_make_free(fx, &fx->blocked[1]);
	io_wq_test_queue_work(fx);

	rcu_read_lock();
	woken = io_wq_activate_free_worker(&fx->wq, fx->acct);
	rcu_read_unlock();

	KUNIT_EXPECT_FALSE_MSG(test, woken,
			       "a free worker blocked elsewhere counted as taking the work: none is created");
	KUNIT_EXPECT_FALSE(test, io_wq_test_blocked_woken(&fx->blocked[0]));
	KUNIT_EXPECT_FALSE(test, io_wq_test_blocked_woken(&fx->blocked[1]));
}

static struct kunit_case io_wq_test_cases[] = {
	KUNIT_CASE(io_wq_blocking_worker_wakes_idle_test),
	KUNIT_CASE(io_wq_blocking_free_worker_not_itself_test),
	KUNIT_CASE(io_wq_blocking_worker_nothing_queued_test),
	KUNIT_CASE(io_wq_blocking_workers_wake_one_test),
	KUNIT_CASE(io_wq_create_at_max_wakes_idle_test),
	KUNIT_CASE(io_wq_blocked_free_workers_passed_by_test),
	KUNIT_CASE(io_wq_enqueue_no_idle_worker_test),
	{}
};

static struct kunit_suite io_wq_test_suite = {
	.name = "io_uring_io_wq",
	.init = io_wq_test_init,
	.exit = io_wq_test_exit,
	.test_cases = io_wq_test_cases,
};

kunit_test_suite(io_wq_test_suite);
