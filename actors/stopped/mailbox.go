// Package stopped gives actors a mailbox that answers, instead of
// dropping, the requests still queued when the actor stops and those that
// reach it afterwards.
//
// The pinned protoactor handles a Stop system message ahead of the user
// messages queued before it: the actor sees Stopping and Stopped, leaves
// the process registry, and every user message still in its mailbox, or
// posted to it later by a sender holding the process, is then dropped
// without a word (actorContext.InvokeUserMessage returns early once the
// actor is stopped); no DeadLetterResponse goes to its sender. Only a
// message sent through a PID after the actor left the registry reaches
// dead letters, and only one with a sender gets a DeadLetterResponse,
// which does not say which actor or request it answers.
//
// A Mailbox from this package wraps protoactor's unbounded mailbox and its
// invoker: once the invoker has handled a Stop, each later user message
// goes to the actor's Answer, which names the reply that request gets
// from an actor that is gone (the retriable code Kafka gives). A caller
// that sends through the actor's Process (actor.ProcessRegistry.Get once,
// kept) rather than through its PID therefore always reaches this mailbox
// and always gets its answer, even long after the stop. The cost per
// message is one boolean test on the actor's own goroutine; no system
// message, no watch.
package stopped

import "github.com/asynkron/protoactor-go/actor"

// Answer returns the reply a request gets from an actor that has stopped,
// and where it goes (the sender, or a reply PID the message carries);
// to nil means no answer (the message is not a request).
type Answer func(msg any, sender *actor.PID) (to *actor.PID, reply any)

// Mailbox returns a producer of unbounded mailboxes whose user messages,
// once the actor has handled a Stop, are answered with answer's reply,
// sent through system's root context.
func Mailbox(system *actor.ActorSystem, answer Answer) actor.MailboxProducer {
	inner := actor.Unbounded()
	return func() actor.Mailbox {
		return &mailbox{Mailbox: inner(), system: system, answer: answer}
	}
}

// mailbox is protoactor's mailbox with a wrapped invoker.
type mailbox struct {
	actor.Mailbox
	system *actor.ActorSystem
	answer Answer
}

// RegisterHandlers registers the wrapping invoker. It implements
// actor.Mailbox.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.Mailbox.RegisterHandlers(&invokerAfterStop{MessageInvoker: invoker, m: m}, dispatcher)
}

// invokerAfterStop passes messages to the actor until it has handled a
// Stop, then answers the user messages itself. Its fields are used only
// by the mailbox's run loop, which runs on one goroutine at a time (the
// mailbox's atomic scheduling orders the runs).
type invokerAfterStop struct {
	actor.MessageInvoker
	m       *mailbox
	stopped bool
}

// InvokeSystemMessage passes msg on and notes a Stop.
func (i *invokerAfterStop) InvokeSystemMessage(msg any) {
	i.MessageInvoker.InvokeSystemMessage(msg)
	if _, ok := msg.(*actor.Stop); ok {
		i.stopped = true
	}
}

// InvokeUserMessage passes msg to the actor, or answers it once the actor
// has stopped.
func (i *invokerAfterStop) InvokeUserMessage(msg any) {
	if !i.stopped {
		i.MessageInvoker.InvokeUserMessage(msg)
		return
	}
	_, m, sender := actor.UnwrapEnvelope(msg)
	if to, reply := i.m.answer(m, sender); to != nil && reply != nil {
		i.m.system.Root.Send(to, reply)
	}
}
