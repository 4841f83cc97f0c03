// The channel handler that answers 408 and closes a connection slow to send a request head.
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Slow clients: a connection has `limit` to deliver a complete request head, from its opening
/// and from the end of each answer. One that has not (sending a byte now and then, or nothing)
/// is answered `408 Request Timeout` with a one-line reason and closed, so that no client can
/// hold a connection, and its memory, for long. An idle timeout alone would not end a client
/// that trickles bytes.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let limit: TimeAmount
    /// When the connection must have delivered its next request head.
    private var deadline: NIODeadline = .now()
    private var timer: Scheduled<Void>?
    private var inRequest = false

    init(limit: TimeAmount) { self.limit = limit }

    // One timer a connection, moved only when it fires: a request costs a clock read, not a
    // timer scheduled and cancelled.
    func handlerAdded(context: ChannelHandlerContext) {
        deadline = .now() + limit
        schedule(context, at: deadline)
    }

    func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { inRequest = true }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inRequest = false
            deadline = .now() + limit
        }
        context.write(data, promise: promise)
    }

    private func schedule(_ context: ChannelHandlerContext, at when: NIODeadline) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: when) {
            let (handler, context) = loopBound.value
            handler.fire(context)
        }
    }

    private func fire(_ context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        // A request being answered is bounded by the store's timeout, not by this one.
        if inRequest { return schedule(context, at: .now() + limit) }
        if NIODeadline.now() < deadline { return schedule(context, at: deadline) }
        expire(context)
    }

    private func expire(_ context: ChannelHandlerContext) {
        let seconds = limit.nanoseconds / 1_000_000_000
        let body = "{\"valid\":false,\"code\":\"timeout\",\"reason\":\"no complete request within \(seconds) s\"}\n"
        var head = HTTPResponse(status: .requestTimeout)
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = "\(body.utf8.count)"
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(string: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
