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
    private var timer: Scheduled<Void>?
    private var inRequest = false

    init(limit: TimeAmount) { self.limit = limit }

    func handlerAdded(context: ChannelHandlerContext) { arm(context) }
    func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            timer?.cancel()
            timer = nil
            inRequest = true
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            inRequest = false
            arm(context)
        }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext) {
        timer?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: limit) {
            let (handler, context) = loopBound.value
            handler.expire(context)
        }
    }

    private func expire(_ context: ChannelHandlerContext) {
        guard !inRequest, context.channel.isActive else { return }
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
